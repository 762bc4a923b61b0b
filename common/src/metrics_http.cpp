#include "accel/common/metrics_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>

namespace accel::metrics {
namespace {

constexpr unsigned kMaxConnections = 16;
constexpr unsigned kTimeoutSeconds = 10;

std::string parse(const std::string& address, sockaddr_in* sa) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    return "'" + address + "' is not HOST:PORT (a numeric IPv4 host, e.g. 127.0.0.1:9464)";
  const std::string port_text = address.substr(colon + 1);
  char* end = nullptr;
  unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (*end != '\0' || port > 65535 ||
      port_text.find_first_not_of("0123456789") != std::string::npos)
    return "'" + port_text + "' in '" + address + "' is not a port (0 to 65535)";
  *sa = sockaddr_in{};
  sa->sin_family = AF_INET;
  sa->sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa->sin_addr) != 1)
    return "'" + address.substr(0, colon) + "' in '" + address + "' is not a numeric IPv4 address";
  return "";
}

MHD_Result reply(MHD_Connection* c, unsigned status, const std::string& body, const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

MHD_Result answer(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                  const char*, size_t* upload_size, void**) {
  auto* self = static_cast<const HttpEndpoint*>(cls);
  if (std::strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      std::strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    if (upload_size) *upload_size = 0;  // a body is not read
    return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n", "text/plain");
  }
  if (std::strcmp(url, "/metrics") != 0 && std::strcmp(url, "/") != 0)
    return reply(c, MHD_HTTP_NOT_FOUND, "metrics are at /metrics\n", "text/plain");
  const char* accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  Format format = formatFor(accept ? accept : "");
  return reply(c, MHD_HTTP_OK, self->render()(format), contentType(format));
}

}  // namespace

std::string checkAddress(const std::string& address) {
  sockaddr_in sa{};
  return parse(address, &sa);
}

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::start(const std::string& address,
                                                          Render render) {
  sockaddr_in sa{};
  if (auto why = parse(address, &sa); !why.empty())
    return Error(ErrorCode::kInvalidArgument, "metrics: " + why);
  std::unique_ptr<HttpEndpoint> e(new HttpEndpoint(std::move(render)));
  e->daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, nullptr, nullptr, &answer, e.get(),
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&sa), MHD_OPTION_CONNECTION_LIMIT,
      kMaxConnections, MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds, MHD_OPTION_END);
  if (!e->daemon_) return Error(ErrorCode::kUnavailable, "metrics: cannot listen on " + address);
  const MHD_DaemonInfo* info = MHD_get_daemon_info(e->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  e->port_ = info ? info->port : 0;
  return e;
}

HttpEndpoint::~HttpEndpoint() {
  if (daemon_) MHD_stop_daemon(daemon_);
}

}  // namespace accel::metrics
