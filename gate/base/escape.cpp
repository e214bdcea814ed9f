#include "base/escape.h"

#include <cstdint>

namespace perfgate {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool IsXmlChar(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

// Decodes one UTF-8 sequence at text[pos]; advances pos. Malformed, overlong
// and surrogate encodings decode to U+FFFD and consume one byte.
char32_t DecodeUtf8(std::string_view text, size_t& pos) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  uint8_t lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || pos + length > text.size()) {
    ++pos;
    return kReplacement;
  }
  char32_t c = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    uint8_t next = byte(pos + i);
    if ((next & 0xC0) != 0x80) {
      ++pos;
      return kReplacement;
    }
    c = (c << 6) | (next & 0x3F);
  }
  static constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMinForLength[length] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
    ++pos;
    return kReplacement;
  }
  pos += length;
  return c;
}

void AppendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Calls emit(c) for every character that may appear in an XML document.
template <typename Emit>
void ForEachXmlChar(std::string_view text, Emit emit) {
  for (size_t pos = 0; pos < text.size();) {
    char32_t c = DecodeUtf8(text, pos);
    if (IsXmlChar(c)) emit(c);
  }
}

}  // namespace

std::string SanitizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachXmlChar(text, [&](char32_t c) { AppendUtf8(out, c); });
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachXmlChar(text, [&](char32_t c) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      // A bare CR would be normalized to LF by any XML parser.
      case '\r':
        out += "&#13;";
        break;
      default:
        AppendUtf8(out, c);
    }
  });
  return out;
}

std::string XmlAttributeEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : XmlEscape(text)) {
    switch (ch) {
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string MarkdownEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  ForEachXmlChar(text, [&](char32_t c) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      case '\\':
      case '|':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '#':
      case '~':
      case '!':
        out += '\\';
        out += static_cast<char>(c);
        break;
      default:
        AppendUtf8(out, c);
    }
  });
  return out;
}

std::string Abbreviate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  static constexpr std::string_view kEllipsis = "...";
  size_t cut = max_bytes > kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  // Back up over UTF-8 continuation bytes so no character is split.
  while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + std::string(kEllipsis);
}

}  // namespace perfgate
