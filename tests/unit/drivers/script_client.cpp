#include "script_client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace accel::test {

std::string ScriptDir::script(const std::string& name, const std::string& body) const {
  std::string p = path(name);
  write(name, "#!/bin/sh\nDIR='" + dir_.path() + "'\n" + body + "\n");
  ::chmod(p.c_str(), 0755);
  return p;
}

std::string ScriptDir::read(const std::string& name) const {
  std::ifstream in(path(name));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ScriptDir::write(const std::string& name, const std::string& text) const {
  std::ofstream(path(name)) << text;
}

}  // namespace accel::test
