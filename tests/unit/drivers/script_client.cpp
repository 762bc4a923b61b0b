#include "script_client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace accel::test {

ScriptDir::ScriptDir() {
  std::string tmpl = std::filesystem::temp_directory_path() / "accel-driver-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
}

ScriptDir::~ScriptDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string ScriptDir::script(const std::string& name, const std::string& body) const {
  std::string p = path(name);
  write(name, "#!/bin/sh\nDIR='" + dir_ + "'\n" + body + "\n");
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
