// Renders docs/config-reference.md from the key tables (config_keys.cpp).
// Only the prose that is not per key lives here; everything about a key comes
// from its row, so the reference cannot drift from what the parser accepts.
#include "accel/common/config_doc.h"

#include "accel/common/config_keys.h"
#include "accel/common/config_schema.h"
#include "accel/common/slurm_time.h"

namespace accel {
namespace {

constexpr std::string_view kHeader = R"(# Configuration reference

<!-- Generated from the key tables in common/src/config_keys.cpp by accel-config-doc.
     Do not edit: change the tables, then run `accel-config-doc > docs/config-reference.md`.
     A unit test fails when this file and the tables disagree. -->

accel-agent reads two files written in the `Key=Value` syntax of `slurm.conf`.

## Where the files are

Both files live in the directory of `slurm.conf`: the directory of the path in the
environment variable `SLURM_CONF` when it is set (it must be absolute), else `/etc/slurm`.
An explicit path given to a command overrides where `accel.conf` is read from.
`accelctl config check [FILE]` checks `accel.conf` (or FILE) and, when there is one in the
same directory, `vipu.conf`, and prints every error found, each as
`FILE:LINE: key 'Key': problem`.

## Syntax

The syntax is the one of `slurm.conf`:

- One `Key=Value` entry per line, or several separated by blanks (`A=1 B=2`).
  Blanks around `=` are allowed.
- Key names are matched ignoring letter case (`loglevel` is `LogLevel`).
- A value ends at the first blank. To include blanks, enclose the whole value in
  double quotes: `Key="a b"`.
- `#` starts a comment that runs to the end of the line, wherever it appears, even
  inside double quotes. Write `\#` for a literal `#` and `\\` for a backslash.
- A backslash at the end of a line continues the entry on the next line.
- Blank lines are ignored.
- A key that is not in the tables below, a key set twice, a value that does not fit
  its type, and a line that is not `Key=Value` are all errors: the file is refused as
  a whole, never half-applied.
- An empty value (`Key=""`) is an error; to leave a key unset, leave it out.

## Value types

| Type | Written as |
|---|---|
| string | Any text; quote it if it contains blanks. |
| path | An absolute path (starting with `/`). |
| boolean | `yes`, `no`, `true`, `false`, `1` or `0`, in any letter case. |
| whole number | Decimal digits, without sign, within the key's range. |
| seconds | A whole number of seconds, within the key's range. |
| Slurm time | )";

constexpr std::string_view kTypesTail = R"( |
| one of | One of the listed words, in any letter case. |
| size | A whole number of bytes, optionally followed by `K`, `M`, `G` or `T` (powers of 1024). |
)";

std::string code(std::string_view text) { return "`" + std::string(text) + "`"; }

// Markdown renderers derive a heading's anchor from its text in lower case.
std::string anchor(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The Type column: the type's name, with the choices for an enum.
std::string typeCell(const KeySpec& spec) {
  std::string cell(valueTypeName(spec.type));
  if (spec.type != ValueType::kEnum) return cell;
  for (std::size_t i = 0; i < spec.choices.size(); ++i) {
    cell += (i == 0 ? " " : ", ") + code(spec.choices[i]);
  }
  return cell;
}

std::string defaultCell(const KeySpec& spec) {
  if (!spec.default_value.empty()) return code(spec.default_value);
  return spec.required ? "none" : "unset";
}

std::string requiredCell(const KeySpec& spec) {
  if (spec.required) return "yes";
  if (!spec.required_if.empty()) return "when " + code(spec.required_if) + " is enabled";
  return "no";
}

// "1 to 300 seconds", "at least 1", ... or empty when the type has no range.
std::string rangeText(const KeySpec& spec) {
  bool ranged = spec.type == ValueType::kUint || spec.type == ValueType::kSeconds ||
                spec.type == ValueType::kSize || spec.type == ValueType::kSlurmTime;
  if (!ranged || (spec.min == 0 && spec.max == kNoMaximum)) return {};
  auto show = [&](std::uint64_t n) {
    if (spec.type != ValueType::kSlurmTime) return std::to_string(n);
    return code(formatSlurmTime(SlurmDuration::fromSeconds(static_cast<std::int64_t>(n))));
  };
  // Seconds and bytes carry their unit, in the number of the bound it follows.
  auto unit = [&](std::uint64_t n) -> std::string {
    if (spec.type == ValueType::kSeconds) return n == 1 ? " second" : " seconds";
    if (spec.type == ValueType::kSize) return n == 1 ? " byte" : " bytes";
    return "";
  };
  if (spec.max == kNoMaximum) return "at least " + show(spec.min) + unit(spec.min);
  return show(spec.min) + " to " + show(spec.max) + unit(spec.max);
}

std::string renderKey(const KeySpec& spec) {
  std::string out = "### " + std::string(spec.name) + "\n\n" + std::string(spec.help) + "\n\n";
  out += "- Type: " + typeCell(spec) + "\n";
  out += "- Default: " + defaultCell(spec) + "\n";
  if (std::string range = rangeText(spec); !range.empty()) out += "- Range: " + range + "\n";
  out += "- Required: " + requiredCell(spec) + "\n";
  if (spec.secret) out += "- Secret: never shown in messages\n";
  return out;
}

std::string renderSchema(const ConfigSchema& schema) {
  std::string out =
      "## " + std::string(schema.file_name) + "\n\n" + std::string(schema.summary) + "\n\n";
  out += "| Key | Type | Default | Required |\n|---|---|---|---|\n";
  for (const KeySpec& spec : schema.keys) {
    out += "| [" + std::string(spec.name) + "](#" + anchor(spec.name) + ") | " + typeCell(spec) +
           " | " + defaultCell(spec) + " | " + requiredCell(spec) + " |\n";
  }
  for (const KeySpec& spec : schema.keys) out += "\n" + renderKey(spec);
  return out;
}

// What ApplianceTimeDefault, ApplianceTimeMax and the jobs' own limits
// measure, which no key's text alone can say.
constexpr std::string_view kLimitSection = R"(
## What an appliance time limit measures

`ApplianceTimeDefault`, `ApplianceTimeMax` and the limits jobs ask for (`--appliance-time`,
`--job-time-sec`) count the time a job uses its accelerators, by kind:

| the job has | the clock runs while |
|---|---|
| appliance jobs (the node reads an appliance: `ApplianceCommand`) | at least one of the job's appliance jobs runs on the appliance, as the appliance reports it |
| IPUs of an IPU-POD (`--ipus`, a node with `vipu.conf`) | from the end of the prolog, one of the job's steps runs on the node (the batch script too) |
| local accelerators (GPUs given by Slurm) | one of the job's steps holding its devices runs (the batch script too) |

Queue time, prolog time and time between steps never count. A requeued job's next run starts
with a fresh budget, or with what its earlier runs left (`ApplianceTimeOnRequeue`). A job with
a limit that none of these measures on a node (no appliance there, no IPUs, no GPUs of the job)
runs unlimited there: its output gets an `accel:` line saying so and its summary names the node
under `limit_unmeasured`. At the limit the agent sends the job's warning signal
(`--appliance-signal`) ahead of it, then SIGTERM, cancels its appliance jobs, and sends SIGKILL after
`ApplianceKillGrace`.
)";

}  // namespace

std::string renderConfigReference() {
  std::string out(kHeader);
  out += "Slurm's time notation: " + std::string(slurmTimeForms()) +
         "; a bare number is minutes. As in Slurm, fields after the first are not limited "
         "(`0:90` is 90 seconds).";
  out += kTypesTail;
  out += kLimitSection;
  for (const ConfigSchema* schema : allConfigSchemas()) out += "\n" + renderSchema(*schema);
  return out;
}

}  // namespace accel
