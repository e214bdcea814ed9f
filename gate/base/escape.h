// Escaping of user- and workload-supplied text (scenario, metric and check
// names, messages, hostnames) for each output format. Every reporter passes
// every such string through one of these; none trusts its input.
#pragma once

#include <string>
#include <string_view>

namespace perfgate {

// Valid UTF-8 restricted to the XML 1.0 character set: characters XML forbids
// (C0 controls other than tab/newline/CR, U+FFFE/U+FFFF) are dropped and
// malformed UTF-8 becomes U+FFFD, so that one bad byte cannot make a whole
// report unparsable.
std::string SanitizeText(std::string_view text);

// XML character data: & < > " ' escaped. Also fine for HTML/XHTML text and
// attribute values (uses &#39;, which HTML 4 lacks &apos; for).
std::string XmlEscape(std::string_view text);

// XML attribute value: as XmlEscape, plus tab/newline/CR as character
// references, which attribute-value normalization would otherwise turn into
// spaces.
std::string XmlAttributeEscape(std::string_view text);

// One line of GitHub-flavoured Markdown, safe inside a table cell: Markdown
// punctuation backslash-escaped, & < > as entities (so no HTML reaches the
// renderer), '|' escaped, newlines folded to spaces.
std::string MarkdownEscape(std::string_view text);

// At most max_bytes of text, cut at a UTF-8 character boundary, with "..."
// appended when something was cut. For attributes and table cells that a
// runaway workload message must not blow up.
std::string Abbreviate(std::string_view text, size_t max_bytes);

}  // namespace perfgate
