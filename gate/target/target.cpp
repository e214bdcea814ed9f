#include "target/target.h"

#include <cctype>

#include "base/error.h"

namespace perfgate {

namespace {

[[noreturn]] void Refuse(const std::string& text, const std::string& why) {
  throw InputError("--target " + text + ": " + why + " (expected ssh://USER@HOST[:PORT])");
}

// What ssh takes as a user or host word: no option-like start, no spaces,
// nothing a remote shell or ssh's own parsing would read as syntax.
bool PlainWord(const std::string& word, const std::string& extra) {
  if (word.empty() || word[0] == '-') return false;
  for (unsigned char c : word) {
    if (!std::isalnum(c) && extra.find(static_cast<char>(c)) == std::string::npos) return false;
  }
  return true;
}

}  // namespace

Target ParseTarget(const std::string& text) {
  Target t;
  if (text.empty()) return t;
  const std::string scheme = "ssh://";
  if (text.rfind(scheme, 0) != 0) {
    const size_t colon = text.find("://");
    Refuse(text, colon == std::string::npos ? "not a URL" : "\"" + text.substr(0, colon) + "\" is not a transport");
  }
  std::string rest = text.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos) Refuse(text, "a path after the host means nothing");
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    t.user = rest.substr(0, at);
    if (t.user.find(':') != std::string::npos) Refuse(text, "a password in the URL is refused: let ssh's configuration or agent hold the key");
    if (!PlainWord(t.user, "._-")) Refuse(text, "\"" + t.user + "\" is not a user name");
    rest = rest.substr(at + 1);
  }
  std::string port;
  bool has_port = false;
  if (!rest.empty() && rest[0] == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) Refuse(text, "an IPv6 address without its closing ]");
    t.host = rest.substr(1, close - 1);
    const std::string after = rest.substr(close + 1);
    if (!after.empty() && after[0] != ':') Refuse(text, "\"" + after + "\" after the address");
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
    if (!PlainWord(t.host, ":.%")) Refuse(text, "\"" + t.host + "\" is not an IPv6 address");
  } else {
    const size_t colon = rest.find(':');
    t.host = rest.substr(0, colon);
    has_port = colon != std::string::npos;
    if (has_port) port = rest.substr(colon + 1);
    if (!PlainWord(t.host, ".-_")) Refuse(text, t.host.empty() ? "no host" : "\"" + t.host + "\" is not a host name");
  }
  if (has_port) {
    int value = 0;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || value > 65535) Refuse(text, "\"" + port + "\" is not a port");
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) Refuse(text, "\"" + port + "\" is not a port");
    t.port = value;
  }
  t.url = text;
  return t;
}

}  // namespace perfgate
