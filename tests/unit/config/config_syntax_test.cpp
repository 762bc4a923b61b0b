// The Key=Value layer alone: what becomes an entry, what is a syntax error,
// and the exact shape of each message.
#include "accel/common/config_syntax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace accel {
namespace {

using Entries = std::vector<ConfigEntry>;

Entries parseOk(std::string_view text) {
  Result<Entries> entries = parseConfigEntries(text, "t.conf");
  EXPECT_TRUE(entries.ok()) << entries.error().message();
  return entries.ok() ? *entries : Entries{};
}

std::string parseError(std::string_view text) {
  Result<Entries> entries = parseConfigEntries(text, "t.conf");
  EXPECT_FALSE(entries.ok());
  return entries.ok() ? std::string() : entries.error().message();
}

TEST(ConfigSyntax, EmptyTextHasNoEntries) {
  EXPECT_TRUE(parseOk("").empty());
  EXPECT_TRUE(parseOk("\n\n   \n\t\n").empty());
}

TEST(ConfigSyntax, EntriesKeepKeySpellingAndLineNumbers) {
  Entries entries = parseOk("ApiHost=ctrl\n\napiport=8090\n");
  EXPECT_EQ(entries, (Entries{{"ApiHost", "ctrl", 1}, {"apiport", "8090", 3}}));
}

TEST(ConfigSyntax, CommentsWholeLineAndTrailing) {
  Entries entries = parseOk(
      "# a comment\n"
      "   # indented comment\n"
      "A=1 # trailing comment\n"
      "B=2#no blank needed\n");
  EXPECT_EQ(entries, (Entries{{"A", "1", 3}, {"B", "2", 4}}));
}

TEST(ConfigSyntax, EscapedHashIsLiteral) {
  EXPECT_EQ(parseOk("A=x\\#y\n"), (Entries{{"A", "x#y", 1}}));
  // "\\#": an escaped backslash, then a real comment.
  EXPECT_EQ(parseOk("A=x\\\\#y\n"), (Entries{{"A", "x\\", 1}}));
}

TEST(ConfigSyntax, HashInsideQuotesStartsAComment) {
  // As in slurm.conf: comments are stripped before quotes are read.
  EXPECT_EQ(parseError("A=\"x#y\"\n"), "t.conf:1: key 'A': value has no closing double quote");
  EXPECT_EQ(parseOk("A=\"x\\#y\"\n"), (Entries{{"A", "x#y", 1}}));
}

TEST(ConfigSyntax, BlanksAroundEqualsAreTolerated) {
  Entries entries =
      parseOk("A = 1\nB\t=\t2\n  C=3  \nSelectTypeParameters = other_cons_res,CR_CPU\n");
  EXPECT_EQ(entries, (Entries{{"A", "1", 1},
                              {"B", "2", 2},
                              {"C", "3", 3},
                              {"SelectTypeParameters", "other_cons_res,CR_CPU", 4}}));
}

TEST(ConfigSyntax, QuotedValuesMayHoldBlanksAndEquals) {
  Entries entries = parseOk("A=\"two words\" B=\"x=y\" C=\"\"\n");
  EXPECT_EQ(entries, (Entries{{"A", "two words", 1}, {"B", "x=y", 1}, {"C", "", 1}}));
}

TEST(ConfigSyntax, SeveralEntriesPerLine) {
  Entries entries = parseOk("A=1 B=2\tC=3\n");
  EXPECT_EQ(entries, (Entries{{"A", "1", 1}, {"B", "2", 1}, {"C", "3", 1}}));
}

TEST(ConfigSyntax, BackslashContinuesTheLine) {
  Entries entries = parseOk("A=1 \\\n  B=2\nC=3\n");
  EXPECT_EQ(entries, (Entries{{"A", "1", 1}, {"B", "2", 1}, {"C", "3", 3}}));
  // A continued value, and a backslash at the very end of the text.
  EXPECT_EQ(parseOk("A=ab\\\ncd\n"), (Entries{{"A", "abcd", 1}}));
  EXPECT_EQ(parseOk("A=1 \\"), (Entries{{"A", "1", 1}}));
}

TEST(ConfigSyntax, CarriageReturnLineEndings) {
  EXPECT_EQ(parseOk("A=1\r\nB=\"x y\"\r\n"), (Entries{{"A", "1", 1}, {"B", "x y", 2}}));
}

TEST(ConfigSyntax, NoTrailingNewline) { EXPECT_EQ(parseOk("A=1"), (Entries{{"A", "1", 1}})); }

TEST(ConfigSyntax, LineThatIsNotKeyValue) {
  EXPECT_EQ(parseError("A=1\nhello world\n"), "t.conf:2: expected Key=Value, found 'hello world'");
  EXPECT_EQ(parseError("=5\n"), "t.conf:1: expected Key=Value, found '=5'");
  EXPECT_EQ(parseError("A=1 stray\n"), "t.conf:1: expected Key=Value, found 'stray'");
}

TEST(ConfigSyntax, UnquotedValueWithBlankSaysWhere) {
  EXPECT_EQ(parseError("A=two words\n"), "t.conf:1: expected Key=Value, found 'words'");
}

TEST(ConfigSyntax, MissingValue) {
  EXPECT_EQ(parseError("Key=\n"), "t.conf:1: key 'Key': no value after '='");
  EXPECT_EQ(parseError("Key =   # nothing\n"), "t.conf:1: key 'Key': no value after '='");
}

TEST(ConfigSyntax, QuoteProblems) {
  EXPECT_EQ(parseError("Key=\"abc\n"), "t.conf:1: key 'Key': value has no closing double quote");
  EXPECT_EQ(parseError("Key=\"a\"b\n"),
            "t.conf:1: key 'Key': unexpected text after the closing double quote: 'b'");
}

TEST(ConfigSyntax, ControlBytesMakeTheLineAnError) {
  std::string text = "A=1\nB=x";
  text += '\0';
  text += "y\nC=3\n";
  EXPECT_EQ(parseError(text), "t.conf:2: control byte \\x00 at column 4; is this a text file?");
  EXPECT_EQ(parseError("A=\x1b[31mred\n"),
            "t.conf:1: control byte \\x1b at column 3; is this a text file?");
}

TEST(ConfigSyntax, ControlByteInAContinuationDropsTheWholeEntry) {
  ConfigErrors errors("t.conf");
  Entries entries = scanConfigText("A=1 \\\nB=\x01\nC=3\n", errors);
  EXPECT_EQ(entries, (Entries{{"C", "3", 3}}));
  EXPECT_EQ(errors.size(), 1u);
}

TEST(ConfigSyntax, EveryErrorIsReportedInLineOrder) {
  EXPECT_EQ(parseError("one\nA=1\ntwo\nB=\"x\nthree\n"),
            "t.conf:1: expected Key=Value, found 'one'\n"
            "t.conf:3: expected Key=Value, found 'two'\n"
            "t.conf:4: key 'B': value has no closing double quote\n"
            "t.conf:5: expected Key=Value, found 'three'");
}

TEST(ConfigSyntax, ScanKeepsGoodEntriesBesideErrors) {
  ConfigErrors errors("t.conf");
  Entries entries = scanConfigText("A=1\nbroken\nB=2\n", errors);
  EXPECT_EQ(entries, (Entries{{"A", "1", 1}, {"B", "2", 3}}));
  EXPECT_EQ(errors.size(), 1u);
}

TEST(ConfigSyntax, TruncatedInput) {
  // A file cut off in the middle of a key, and in the middle of a quoted value.
  EXPECT_EQ(parseError("ApiHost=ctrl\nApiPo"), "t.conf:2: expected Key=Value, found 'ApiPo'");
  EXPECT_EQ(parseError("ApiHost=\"ctr"),
            "t.conf:1: key 'ApiHost': value has no closing double quote");
}

TEST(ConfigSyntax, BinaryGarbageIsRefusedWithBoundedMessages) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 37 + 11) % 256);
  Result<Entries> entries = parseConfigEntries(garbage, "t.conf");
  ASSERT_FALSE(entries.ok());
  const std::string& message = entries.error().message();
  EXPECT_EQ(message.rfind("t.conf:", 0), 0u);
  // Capped at ConfigErrors::kMaxReported lines plus one summary line.
  std::size_t lines =
      1 + static_cast<std::size_t>(std::count(message.begin(), message.end(), '\n'));
  EXPECT_LE(lines, ConfigErrors::kMaxReported + 1);
  for (char c : message) {
    auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte < 0x7f)) << "raw byte in message";
  }
}

TEST(ConfigSyntax, MegabyteLine) {
  std::string value(1 << 20, 'v');
  Entries entries = parseOk("A=" + value + "\nB=2\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].value.size(), value.size());
  // A megabyte of non-Key=Value text: one error, quoted short.
  std::string message = parseError(std::string(1 << 20, 'g') + "\n");
  EXPECT_LT(message.size(), 200u);
  EXPECT_EQ(message.rfind("t.conf:1: expected Key=Value, found 'ggg", 0), 0u);
}

TEST(ConfigSyntax, ManyErrorsAreCappedWithACount) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "bad\n";
  std::string message = parseError(text);
  EXPECT_NE(message.find("t.conf:50: expected Key=Value"), std::string::npos);
  EXPECT_EQ(message.find("t.conf:51:"), std::string::npos);
  EXPECT_NE(message.find("t.conf: 10 more errors not shown"), std::string::npos);
}

}  // namespace
}  // namespace accel
