// report.css. Kept next to the markup it styles; served as a separate file
// because Jenkins' CSP (style-src 'self') blocks inline styles.
#include "report/html_reporter.h"

namespace perfgate {

std::string HtmlReporter::Stylesheet() {
  return R"css(/* perfgate report */
:root {
  --ink: #1f2937;
  --muted: #6b7280;
  --line: #e5e7eb;
  --page: #f4f5f7;
  --card: #ffffff;
  --red: #d13438;
  --red-bg: #fdecec;
  --amber: #b7791f;
  --amber-bg: #fdf4e3;
  --green: #107c41;
  --green-bg: #e7f5ec;
  --blue: #2563eb;
  --blue-bg: #e8effd;
  --grey-bg: #eef0f3;
}

* { box-sizing: border-box; }

body {
  margin: 0;
  background: var(--page);
  color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}

main, .banner, footer { max-width: 1280px; margin: 0 auto; }
main { padding: 0 24px 24px; }

a { color: var(--blue); text-decoration: none; }
a:hover { text-decoration: underline; }

h1, h2, h3 { line-height: 1.2; margin: 0 0 8px; }
h1 { font-size: 26px; overflow-wrap: anywhere; }
h2 { font-size: 19px; overflow-wrap: anywhere; }
h3 { font-size: 15px; margin-top: 20px; }

/* ---- banner ---- */
.banner {
  margin: 24px auto 16px;
  padding: 20px 24px;
  border-radius: 10px;
  background: var(--card);
  border-left: 8px solid var(--muted);
  box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08);
}
.banner.status-pass { border-left-color: var(--green); }
.banner.status-fail, .banner.status-error { border-left-color: var(--red); }
.banner.status-warn { border-left-color: var(--amber); }
.banner .status {
  margin: 0 0 4px;
  font-weight: 700;
  font-size: 13px;
  letter-spacing: 0.06em;
  text-transform: uppercase;
}
.status-pass .status { color: var(--green); }
.status-fail .status, .status-error .status { color: var(--red); }
.status-warn .status { color: var(--amber); }
.banner .summary { margin: 0 0 2px; font-size: 15px; }
.banner .meta { margin: 0; }
.partial { color: var(--red); font-weight: 600; }

.counts { list-style: none; display: flex; flex-wrap: wrap; gap: 8px; margin: 14px 0 0; padding: 0; }
.count { padding: 6px 12px; border-radius: 8px; background: var(--grey-bg); }
.count .n { font-weight: 700; font-size: 18px; margin-right: 2px; font-variant-numeric: tabular-nums; }
.count.regressed, .count.over-budget { background: var(--red-bg); color: var(--red); }
.count.error { background: var(--grey-bg); color: var(--ink); }
.count.inconclusive { background: var(--amber-bg); color: var(--amber); }
.count.improved { background: var(--green-bg); color: var(--green); }
.count.passed { background: var(--blue-bg); color: var(--blue); }
.count.accepted, .count.quarantined { background: #ede9fe; color: #5b21b6; }
.count.zero { background: transparent; color: var(--muted); border: 1px solid var(--line); }

/* ---- cards ---- */
.card {
  background: var(--card);
  border-radius: 10px;
  padding: 18px 20px;
  margin: 0 0 16px;
  box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08);
  overflow-x: auto;
}
.meta, .muted, .sub, .sub-inline { color: var(--muted); }
.sub { display: block; font-size: 12px; }
.sub-inline { font-size: 12px; }
.all-clear { color: var(--green); font-weight: 600; margin: 0; }

.error-box {
  margin: 8px 0 12px;
  padding: 10px 12px;
  border-radius: 6px;
  background: var(--red-bg);
  border-left: 4px solid var(--red);
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
.failures { margin: 4px 0 12px; color: var(--red); overflow-wrap: anywhere; }
.warnings { margin: 4px 0 12px; color: var(--amber); overflow-wrap: anywhere; }

/* ---- tables ---- */
table { border-collapse: collapse; width: 100%; }
th, td { padding: 6px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); }
thead th {
  font-size: 12px;
  font-weight: 600;
  color: var(--muted);
  text-transform: uppercase;
  letter-spacing: 0.03em;
  border-bottom: 2px solid var(--line);
  white-space: nowrap;
}
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
/* break-word, not anywhere: a long name wraps only when it must, not mid-word by choice. */
td.name { overflow-wrap: break-word; min-width: 14em; max-width: 32em; font-weight: 600; }
td.name .sub { font-weight: 400; }
td.chart { width: 290px; padding-top: 2px; padding-bottom: 2px; }
td.bar { width: 130px; vertical-align: middle; }
td.warn { color: var(--red); font-weight: 700; }
tbody tr:hover { background: #fafbfc; }

tr.row-regressed td:first-child, tr.row-over-budget td:first-child { box-shadow: inset 3px 0 0 var(--red); }
tr.row-inconclusive td:first-child { box-shadow: inset 3px 0 0 var(--amber); }
tr.row-error td:first-child { box-shadow: inset 3px 0 0 var(--muted); }

tr.message td {
  border-bottom: 1px solid var(--line);
  padding-top: 0;
  color: var(--muted);
  font-size: 12px;
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}
tr.message:hover { background: transparent; }

.pill {
  display: inline-block;
  padding: 1px 8px;
  border-radius: 999px;
  font-size: 12px;
  font-weight: 600;
  white-space: nowrap;
  vertical-align: middle;
  background: var(--grey-bg);
  color: var(--ink);
}
.pill.regressed, .pill.over-budget { background: var(--red-bg); color: var(--red); }
.pill.inconclusive { background: var(--amber-bg); color: var(--amber); }
.pill.improved { background: var(--green-bg); color: var(--green); }
.pill.passed { background: var(--blue-bg); color: var(--blue); }
.pill.accepted, .pill.quarantined { background: #ede9fe; color: #5b21b6; }

.attach {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12px;
  background: var(--grey-bg);
  border-radius: 4px;
  padding: 0 4px;
}

/* ---- why it regressed ---- */
.why { margin: 12px 0 4px; }
.why h3 { margin-top: 8px; }
.why .change { color: var(--red); }
table.related { width: auto; min-width: 50%; }
table.related td { border-bottom: none; padding: 3px 10px; }

/* ---- charts ---- */
svg.chart { display: block; overflow: visible; }
.figures { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; padding: 10px 12px; border: 1px solid var(--line); border-radius: 8px; }
figcaption { font-weight: 600; margin-bottom: 4px; overflow-wrap: anywhere; }
figure .pair { display: flex; flex-wrap: wrap; gap: 12px; }
figure .sub { margin: 2px 0 0; }

/* ---- evidence: tables of frames, flame graphs ---- */
.evidence h4 { font-size: 14px; margin: 16px 0 4px; }
.evidence-meta { margin: 4px 0 8px; color: var(--muted); overflow-wrap: anywhere; }
.evidence .sub a { overflow-wrap: anywhere; }
table.growth { width: auto; min-width: 60%; margin: 6px 0 12px; }
table.growth td { padding: 3px 10px; }
td.frame { overflow-wrap: anywhere; max-width: 40em; }
td.frame code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
td.grew { color: var(--red); font-weight: 600; }
td.shrank { color: var(--blue); }
figure.flame { margin: 0 0 12px; display: inline-block; }
svg.flame { display: block; }

/* ---- environment ---- */
table.env { width: auto; }
table.env th { white-space: nowrap; color: var(--muted); font-weight: 600; }
table.env td { overflow-wrap: anywhere; }
table.env tr.differs td { background: var(--amber-bg); }

footer { padding: 0 24px 32px; color: var(--muted); font-size: 12px; }

@media print {
  body { background: #fff; }
  .card, .banner { box-shadow: none; border: 1px solid var(--line); }
}
)css";
}

}  // namespace perfgate
