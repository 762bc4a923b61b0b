#pragma once
// CURVE key files shared by accel-agentd, accel-aggregatord and accel-keygen.
// A key file holds one Z85-encoded key (40 characters) and an optional
// newline. NAME.key holds a secret key and must be readable by its owner
// only; NAME.pub holds the matching public key.
#include <string>

#include "accel/common/result.h"

namespace accel::event {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters; never log it
};

Result<CurveKeyPair> generateCurveKeyPair();

// Writes `base`.key (mode 0600) and `base`.pub (mode 0644). An existing
// file is an error (kConflict): keys are not replaced by accident.
Status writeKeyPair(const std::string& base, const CurveKeyPair& keys);

// Reads a public key file. Errors name the file.
Result<std::string> loadPublicKey(const std::string& path);

// Reads a secret key file and derives its public key. A file that its group
// or others may read or write is refused (kPermissionDenied, naming the file
// and its mode), as munge does for its key.
Result<CurveKeyPair> loadSecretKey(const std::string& path);

// True for 40 characters of the Z85 alphabet.
bool isZ85Key(const std::string& text);

}  // namespace accel::event
