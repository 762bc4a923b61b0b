#pragma once
// Process-wide logging. Entry points (daemons, CLI verbs, the SPANK plugin)
// log; library code returns errors instead. Each line should carry the
// component and phase: "prolog: job 42: partition not created: ...".
//
// Sink selection: when stderr is connected to the systemd journal (systemd
// sets JOURNAL_STREAM to stderr's device:inode), lines go to the journal with
// a priority and SYSLOG_IDENTIFIER; otherwise to stderr as "ident: text".
#include <string>
#include <string_view>

namespace accel::log {

enum class Level { kError = 3, kWarning = 4, kInfo = 6, kDebug = 7 };

// Sets the identifier and minimum level; safe to call again (SIGHUP reload).
void init(std::string_view ident, Level min_level);
void setLevel(Level min_level);
Level level();

// Parses "error", "warning", "info", "debug" (case-insensitive).
bool parseLevel(std::string_view text, Level* out);

void write(Level level, std::string_view message);
inline void error(std::string_view m) { write(Level::kError, m); }
inline void warning(std::string_view m) { write(Level::kWarning, m); }
inline void info(std::string_view m) { write(Level::kInfo, m); }
inline void debug(std::string_view m) { write(Level::kDebug, m); }

// True when lines go to the journal (for tests and `accelctl status`).
bool toJournal();

}  // namespace accel::log
