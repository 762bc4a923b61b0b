#pragma once
// A throw-away client program for driver tests: a shell script in a private
// temporary directory, so each test states the client's behaviour in its body.
#include <string>

namespace accel::test {

class ScriptDir {
 public:
  ScriptDir();
  ~ScriptDir();
  // Writes an executable script named `name` with `body` after "#!/bin/sh\n";
  // returns its path. The script can use $DIR (this directory).
  std::string script(const std::string& name, const std::string& body) const;
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string read(const std::string& name) const;
  void write(const std::string& name, const std::string& text) const;

 private:
  std::string dir_;
};

}  // namespace accel::test
