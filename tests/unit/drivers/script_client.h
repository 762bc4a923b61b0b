#pragma once
// A throw-away client program for driver tests: a shell script in a private
// temporary directory, so each test states the client's behaviour in its body.
#include <string>

#include "temp_dir.h"

namespace accel::test {

class ScriptDir {
 public:
  // Writes an executable script named `name` with `body` after "#!/bin/sh\n";
  // returns its path. The script can use $DIR (this directory).
  std::string script(const std::string& name, const std::string& body) const;
  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string read(const std::string& name) const;
  void write(const std::string& name, const std::string& text) const;

 private:
  support::TempDir dir_{"accel-driver"};
};

}  // namespace accel::test
