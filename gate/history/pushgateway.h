// Pushing a run's metrics to a Prometheus Pushgateway over plain HTTP (no
// TLS), in the Prometheus text format, which is what the Pushgateway parses.
#pragma once

#include <string>

namespace perfgate {

struct HttpUrl {
  std::string host;
  std::string port = "80";
  std::string path;  // without a trailing '/'
};

// "http://host[:port][/path]"; InputError naming --push for anything else.
HttpUrl ParseHttpUrl(const std::string& url);

// The grouping path of a suite's metrics: /metrics/job/perfgate/suite@base64/<suite in base64url>,
// so that any suite name (slashes included) is a valid path segment.
std::string PushPath(const std::string& suite);

// Base64 with the URL-safe alphabet and '=' padding, as the Pushgateway decodes it.
std::string Base64Url(const std::string& bytes);

// PUTs `body` (text/plain; version=0.0.4) to url + PushPath(suite), replacing
// that group's metrics. InfraError with the status line and body start when
// the server refuses, or the connection fails (10 s timeouts).
void PushMetrics(const std::string& url, const std::string& suite, const std::string& body);

}  // namespace perfgate
