// The metrics registry's text in both formats, and the HTTP endpoint that
// serves it (a real libmicrohttpd server on a loopback port).
#include "accel/common/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "accel/common/metrics_http.h"
#include "process_util.h"

namespace accel::metrics {
namespace {

bool has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricsTest, CounterIsServedWithTotalInBothFormats) {
  Registry r;
  auto& enforced = r.counter("accel_limit_enforcements", "Jobs stopped at their limit.");
  enforced.add();
  enforced.add(2);
  std::string prom = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(prom, "# TYPE accel_limit_enforcements_total counter")) << prom;
  EXPECT_TRUE(has(prom, "accel_limit_enforcements_total 3")) << prom;
  EXPECT_EQ(prom.find("# EOF"), std::string::npos);
  std::string om = r.render(Format::kOpenMetrics);
  EXPECT_TRUE(has(om, "# TYPE accel_limit_enforcements counter")) << om;
  EXPECT_TRUE(has(om, "accel_limit_enforcements_total 3")) << om;
  EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  Registry r;
  auto& calls = r.counters("accel_calls", "Calls.", {"driver", "result"});
  calls.with({"vi\"pu\\\n", "ok"}).add();
  calls.with({"appliance", "error"}).add(4);
  std::string text = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(text, R"(accel_calls_total{driver="vi\"pu\\\n",result="ok"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(accel_calls_total{driver="appliance",result="error"} 4)")) << text;
}

TEST(MetricsTest, HistogramBucketsAreCumulativeAndInclusive) {
  Registry r;
  auto& hooks =
      r.histograms("accel_hook_duration_seconds", "Hook time.", {"hook"}, {0.005, 0.025, 10});
  auto& prolog = hooks.with({"prolog"});
  for (double v : {0.003, 0.005, 0.02, 7.0, 11.0}) prolog.observe(v);
  std::string text = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(text, "# TYPE accel_hook_duration_seconds histogram")) << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_bucket{hook="prolog",le="0.005"} 2)"))
      << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_bucket{hook="prolog",le="0.025"} 3)"))
      << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_bucket{hook="prolog",le="10"} 4)")) << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_bucket{hook="prolog",le="+Inf"} 5)"))
      << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_count{hook="prolog"} 5)")) << text;
  EXPECT_TRUE(has(text, R"(accel_hook_duration_seconds_sum{hook="prolog"} 18.028)")) << text;
}

TEST(MetricsTest, GaugeFunctionIsReadAtEachRender) {
  Registry r;
  double spooled = 3;
  r.gaugeFn("accel_events_spooled", "Events waiting.", [&] { return spooled; });
  r.gauge("accel_jobs_active", "Jobs.").set(2);
  EXPECT_TRUE(has(r.render(Format::kPrometheus), "accel_events_spooled 3"));
  spooled = 0.5;
  std::string text = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(text, "accel_events_spooled 0.5")) << text;
  EXPECT_TRUE(has(text, "accel_jobs_active 2")) << text;
}

// Labelled series read at each render: those that exist then, and no more.
TEST(MetricsTest, LabelledGaugeFunctionShowsTheSeriesOfTheMoment) {
  Registry r;
  Registry::Series now{{{"42", "0"}, 60}, {{"42", "1"}, 0.5}};
  r.gaugesFn("accel_gpu_utilization_percent", "Busy.", {"job_id", "gpu"}, [&] { return now; });
  std::string text = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(text, "# TYPE accel_gpu_utilization_percent gauge")) << text;
  EXPECT_TRUE(has(text, R"(accel_gpu_utilization_percent{job_id="42",gpu="0"} 60)")) << text;
  EXPECT_TRUE(has(text, R"(accel_gpu_utilization_percent{job_id="42",gpu="1"} 0.5)")) << text;
  now = {{{"43"}, 7}};  // a value missing is empty, not a fault
  text = r.render(Format::kPrometheus);
  EXPECT_FALSE(has(text, R"(job_id="42")")) << "a series gone is not shown: " << text;
  EXPECT_TRUE(has(text, R"(accel_gpu_utilization_percent{job_id="43",gpu=""} 7)")) << text;
}

TEST(MetricsTest, FormatFollowsTheAcceptHeader) {
  // What Prometheus 2.42 sends.
  EXPECT_EQ(
      formatFor(
          "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
          "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
      Format::kOpenMetrics);
  EXPECT_EQ(formatFor("*/*"), Format::kPrometheus);
  EXPECT_EQ(formatFor(""), Format::kPrometheus);
  EXPECT_EQ(formatValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(formatValue(42), "42");
  EXPECT_EQ(formatValue(0.25), "0.25");
}

// Updates from many threads at once lose nothing (run under TSan too).
TEST(MetricsTest, ConcurrentUpdatesAreAllCounted) {
  Registry r;
  auto& c = r.counters("accel_c", "c", {"t"});
  auto& h = r.histograms("accel_h", "h", {}, {0.5}).with({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.with({std::to_string(t % 2)}).add();
        h.observe(i % 2 ? 1.0 : 0.0);
        if (i % 1000 == 0) (void)r.render(Format::kPrometheus);
      }
    });
  for (auto& t : threads) t.join();
  std::string text = r.render(Format::kPrometheus);
  EXPECT_TRUE(has(text, R"(accel_c_total{t="0"} 20000)")) << text;
  EXPECT_TRUE(has(text, R"(accel_c_total{t="1"} 20000)")) << text;
  EXPECT_TRUE(has(text, R"(accel_h_bucket{le="0.5"} 20000)")) << text;
  EXPECT_TRUE(has(text, "accel_h_count 40000")) << text;
}

std::string fetch(uint16_t port, const std::string& request) {
  return support::httpExchange(port, request);
}

// The status code of an answer ("HTTP/1.1 404 Not Found" -> 404); 0 if none.
int status(const std::string& answer) {
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return 0;
  return std::stoi(answer.substr(9, 3));
}

TEST(MetricsHttpTest, ServesTheRegistryAtMetrics) {
  Registry r;
  r.counter("accel_x", "x").add(7);
  auto e = HttpEndpoint::start("127.0.0.1:0", [&](Format f) { return r.render(f); });
  ASSERT_TRUE(e.ok()) << e.error().message();
  ASSERT_NE((*e)->port(), 0);
  std::string prom = fetch((*e)->port(), "GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(status(prom), 200) << prom;
  EXPECT_NE(prom.find("text/plain; version=0.0.4"), std::string::npos) << prom;
  EXPECT_NE(prom.find("\naccel_x_total 7\n"), std::string::npos) << prom;
  std::string om =
      fetch((*e)->port(),
            "GET /metrics HTTP/1.0\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n");
  EXPECT_NE(om.find("application/openmetrics-text"), std::string::npos) << om;
  EXPECT_NE(om.find("# EOF\n"), std::string::npos) << om;
}

TEST(MetricsHttpTest, OtherPathsAndMethodsAreRefused) {
  Registry r;
  auto e = HttpEndpoint::start("127.0.0.1:0", [&](Format f) { return r.render(f); });
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(status(fetch((*e)->port(), "GET /secrets HTTP/1.0\r\n\r\n")), 404);
  EXPECT_EQ(status(fetch((*e)->port(), "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc")),
            405);
  // Garbage is answered with an error and leaves the endpoint serving.
  (void)fetch((*e)->port(), std::string(3000, 'x') + "\r\n\r\n");
  EXPECT_EQ(status(fetch((*e)->port(), "GET / HTTP/1.0\r\n\r\n")), 200);
}

TEST(MetricsHttpTest, BadAddressesAreNamed) {
  for (const char* bad :
       {"9464", "localhost:9464", "127.0.0.1:http", "127.0.0.1:70000", "127.0.0.1:"}) {
    EXPECT_FALSE(checkAddress(bad).empty()) << bad;
    auto e = HttpEndpoint::start(bad, [](Format) { return std::string(); });
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.error().message().find(bad == std::string("127.0.0.1:") ? "127.0.0.1:" : bad),
              std::string::npos)
        << e.error().message();
  }
  EXPECT_TRUE(checkAddress("0.0.0.0:9464").empty());
}

TEST(MetricsHttpTest, APortInUseIsAnError) {
  auto first = HttpEndpoint::start("127.0.0.1:0", [](Format) { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = HttpEndpoint::start("127.0.0.1:" + std::to_string((*first)->port()),
                                    [](Format) { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace accel::metrics
