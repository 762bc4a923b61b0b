// Xid reports of NVIDIA's driver from the kernel log: the lines of the
// driver's releases (with and without pid and name), a /dev/kmsg record's
// prefix, and lines that only look like one, which are not reports.
#include "accel/nvml/xid.h"

#include <gtest/gtest.h>

namespace accel::nvml {
namespace {

using telemetry::isDevice;
using telemetry::XidClass;
using telemetry::xidClassName;
using telemetry::XidReport;

TEST(XidLine, ANewerDriversLineGivesCodeDevicePidAndName) {
  auto r = parseXidLine(
      "NVRM: Xid (PCI:0000:86:00): 13, pid=24581, name=python3, Graphics SM Warp Exception on "
      "(GPC 0, TPC 1, SM 0): Out Of Range Address");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 13u);
  EXPECT_EQ(r->device, "0000:86:00");
  EXPECT_EQ(r->pid, std::optional<uint32_t>(24581));
  EXPECT_EQ(r->process, "python3");
  EXPECT_EQ(r->text, "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address");
  EXPECT_EQ(classifyXid(r->code), XidClass::kApplication);
}

TEST(XidLine, AKmsgRecordWithAnUnknownPid) {
  auto r = parseXidLine(
      "4,1187,52231187,-;NVRM: Xid (PCI:0000:3B:00): 79, pid='<unknown>', name=<unknown>, GPU "
      "has fallen off the bus.\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 79u);
  EXPECT_EQ(r->device, "0000:3b:00") << "lower case";
  EXPECT_EQ(r->pid, std::nullopt);
  EXPECT_EQ(r->process, "");
  EXPECT_EQ(r->text, "GPU has fallen off the bus.");
  EXPECT_EQ(classifyXid(r->code), XidClass::kHardware);
  EXPECT_TRUE(isDevice(*r, "0000:3b:00.0"));
  EXPECT_FALSE(isDevice(*r, "0000:3b:01.0"));
  EXPECT_FALSE(isDevice(*r, "0000:3b:00"));
}

TEST(XidLine, AnOlderDriversLineHasNoPid) {
  auto r = parseXidLine("NVRM: Xid (PCI:0000:06:00): 31, Ch 00000008, intr 10000000. MMU Fault");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 31u);
  EXPECT_EQ(r->pid, std::nullopt);
  EXPECT_EQ(r->text, "Ch 00000008, intr 10000000. MMU Fault");
  // An 8-digit domain, as NVML writes it, and no text at all.
  auto bare = parseXidLine("NVRM: Xid (PCI:00000000:1a:00): 48");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->device, "0000:1a:00");
  EXPECT_EQ(bare->text, "");
}

TEST(XidLine, WhatIsNoReportIsRefused) {
  for (const char* line :
       {"", "NVRM: Xid", "NVRM: Xid (PCI:0000:86:00): x, pid=1", "NVRM: Xid (PCI:0000:86): 13, a",
        "NVRM: Xid (PCI:10000:86:00): 13, a", "NVRM: Xid (PCI:0000:86:20): 13, a",
        "NVRM: Xid (PCI:0000:86:00): 99999999999, a", "NVRM: Xid (PCI:0000:86:00): 13x",
        "nvidia: Xid (PCI:0000:86:00): 13, a", "NVRM: Xid (PCI:0000:8g:00): 13, a"})
    EXPECT_FALSE(parseXidLine(line)) << line;
  EXPECT_FALSE(parseXidLine(std::string(XidReport::kMaxLine + 1, 'x')));
}

// A user can write to the kernel log: the report's fields stay bounded and
// printable, and a pid that is no number (or 0) is no pid.
TEST(XidLine, FieldsAreBoundedAndPrintable) {
  const std::string name(500, 'n');
  auto r = parseXidLine("NVRM: Xid (PCI:0000:86:00): 13, pid=0, name=" + name + "\x01\xff, " +
                        std::string(1000, 't') + "\x1b[31m");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pid, std::nullopt);
  EXPECT_EQ(r->process.size(), XidReport::kMaxProcess);
  EXPECT_EQ(r->text.size(), XidReport::kMaxText);
  for (char c : r->process + r->text) EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << int(c);
  auto forged = parseXidLine("NVRM: Xid (PCI:0000:86:00): 13, pid=12ab, name=x, t");
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->pid, std::nullopt);
}

TEST(XidClass, TheTableOfCodes) {
  for (uint32_t c : {13u, 31u, 43u, 45u, 68u})
    EXPECT_EQ(classifyXid(c), XidClass::kApplication) << c;
  for (uint32_t c : {48u, 63u, 64u, 74u, 79u, 92u, 93u, 94u, 95u, 119u, 120u})
    EXPECT_EQ(classifyXid(c), XidClass::kHardware) << c;
  for (uint32_t c : {0u, 1u, 62u, 121u, 4000000000u})
    EXPECT_EQ(classifyXid(c), XidClass::kOther) << c;
  EXPECT_STREQ(xidClassName(XidClass::kHardware), "hardware");
}

}  // namespace
}  // namespace accel::nvml
