#pragma once
// The one place a topology comes from: the live machine, or hwloc XML
// captured on a real one (lstopo --of xml). Both paths go through the same
// hwloc adapter and classification, so tests on captured XML exercise the
// code that runs on nodes.
#include <filesystem>
#include <optional>
#include <string_view>

#include "accel/common/result.h"
#include "accel/topology/model.h"

namespace accel::topology {

struct LoadOptions {
  // Unset: discover the live machine, I/O devices included. Set: read this
  // hwloc XML export instead. XML is never treated as "this system".
  std::optional<std::filesystem::path> xml_path;
  // Live discovery only. hwloc's OpenCL component initialises every
  // vendor's OpenCL runtime (seconds on GPU nodes, and it touches the
  // devices); it is off unless asked for. Accelerators are found from PCI
  // either way; this only adds opencl* OS device names. (The GL component
  // and libpciaccess are never used live: the first can hang on headless
  // nodes, the second adds only PCI names and leaks.)
  bool opencl = false;
};

// Errors:
//   kNotFound / kPermissionDenied / kIo: the XML file cannot be read;
//   kInvalidArgument: the path is a directory or absurdly large;
//   kParse: empty, not an hwloc topology, malformed or truncated XML;
//   kUnsupported: an XML format newer than the linked hwloc reads (3.0 with
//     hwloc 2.x), with the command that exports a readable one;
//   kIo: live discovery failed.
// Every message names the file. A node without accelerators or NICs is not
// an error: those lists are empty.
//
// hwloc prints some diagnostics on stderr by itself. The first call sets
// HWLOC_HIDE_ERRORS=2 unless the environment already sets it (hwloc reads
// it once per process), so make the first call before starting threads;
// HWLOC_HIDE_ERRORS=0 in the environment brings hwloc's messages back.
Result<NodeTopology> loadTopology(const LoadOptions& options = {});

// Same as loading an XML file, from text in memory; `origin` starts every
// error message.
Result<NodeTopology> loadTopologyFromXmlText(std::string_view xml,
                                             std::string_view origin = "topology XML text");

}  // namespace accel::topology
