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

// One grouping-key label as a path segment: "name/value" when the value is
// non-empty and only letters, digits and "-._~", else "name@base64/<value in
// base64url>" ("=" for an empty value), so that any value (slashes included)
// is one valid path segment.
std::string GroupingSegment(const std::string& name, const std::string& value);

// The grouping path of one scenario's metrics:
// /metrics/job/perfgate/suite/<suite>/scenario/<scenario>/host/<host>, each
// value spelled by GroupingSegment; the host keeps two runners of one suite
// in two groups instead of each replacing the other's.
std::string PushPath(const std::string& suite, const std::string& scenario, const std::string& host);

// Base64 with the URL-safe alphabet and '=' padding, as the Pushgateway decodes it.
std::string Base64Url(const std::string& bytes);

// PUTs `body` (text/plain; version=0.0.4, no timestamps) to url + `path`
// (a PushPath), replacing that group's metrics. InfraError with the status
// line and body start when the server refuses, or the connection fails (10 s
// timeouts).
void PushMetrics(const std::string& url, const std::string& path, const std::string& body);

}  // namespace perfgate
