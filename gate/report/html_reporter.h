// report/index.html (+ report/report.css): the report a performance engineer
// opens to see what failed and why. Static XHTML-compatible markup, no
// JavaScript, no inline styles, charts as inline SVG with presentation
// attributes, so it renders fully under Jenkins' default CSP
// ("sandbox allow-same-origin; default-src 'none'; img-src 'self';
// style-src 'self'") and parses as XML.
#pragma once

#include "report/reporter.h"

namespace perfgate {

class HtmlReporter : public Reporter {
 public:
  std::string Render(const RunResults& results) const override;
  // Contents of report.css, which index.html links next to itself.
  static std::string Stylesheet();
};

}  // namespace perfgate
