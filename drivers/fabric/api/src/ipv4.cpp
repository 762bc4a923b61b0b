#include "accel/fabric/ipv4.h"

#include <optional>

namespace accel::fabric {
namespace {

// A decimal number of 1..max_digits digits without a leading zero, at most
// `max`; nullopt otherwise.
std::optional<uint32_t> parseDecimal(std::string_view text, size_t max_digits, uint32_t max) {
  if (text.empty() || text.size() > max_digits) return std::nullopt;
  if (text.size() > 1 && text[0] == '0') return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > max) return std::nullopt;
  return value;
}

Error badText(std::string_view what, std::string_view text) {
  return Error(ErrorCode::kInvalidArgument,
               "'" + std::string(text) + "' is not " + std::string(what));
}

}  // namespace

Result<uint32_t> parseIpv4(std::string_view text) {
  uint32_t address = 0;
  std::string_view rest = text;
  for (int part = 0; part < 4; ++part) {
    size_t dot = rest.find('.');
    if ((part < 3) != (dot != std::string_view::npos)) return badText("an IPv4 address", text);
    auto octet = parseDecimal(rest.substr(0, dot), 3, 255);
    if (!octet) return badText("an IPv4 address", text);
    address = (address << 8) | *octet;
    rest = part < 3 ? rest.substr(dot + 1) : std::string_view();
  }
  return address;
}

Result<Ipv4Cidr> parseCidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return badText("an IPv4 prefix (a.b.c.d/n)", text);
  auto address = parseIpv4(text.substr(0, slash));
  auto length = parseDecimal(text.substr(slash + 1), 2, 32);
  if (!address.ok() || !length) return badText("an IPv4 prefix (a.b.c.d/n)", text);
  return Ipv4Cidr{*address, static_cast<uint8_t>(*length)};
}

Result<Ipv4Cidr> parseNetwork(std::string_view text) {
  auto cidr = parseCidr(text);
  if (!cidr.ok()) return cidr.error();
  if (!cidr->isNetwork()) {
    return Error(ErrorCode::kInvalidArgument, "'" + std::string(text) +
                                                  "' has host bits set; the network is " +
                                                  formatCidr({cidr->network(), cidr->length}));
  }
  return cidr;
}

std::string formatIpv4(uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

std::string formatCidr(const Ipv4Cidr& cidr) {
  return formatIpv4(cidr.address) + "/" + std::to_string(cidr.length);
}

}  // namespace accel::fabric
