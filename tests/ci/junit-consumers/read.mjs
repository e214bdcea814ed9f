// Reads a junit.xml with the parsers of two GitHub actions that publish
// JUnit results, built from their own sources, and prints what each counts:
//   node --import ./actions-core.mjs read.mjs DORNY_LIB MIKEPENZ_LIB JUNIT_XML
// DORNY_LIB and MIKEPENZ_LIB are the `lib/` directories tsc writes in
// checkouts of dorny/test-reporter and mikepenz/action-junit-report.
// Prints one line per parser: "<parser> tests=N failed=N skipped=N", then one
// line per annotation mikepenz would write ("annotation <level> <path>").
import {readFileSync} from 'node:fs'
import {pathToFileURL} from 'node:url'
import path from 'node:path'

const [dornyLib, mikepenzLib, junit] = process.argv.slice(2)
const load = (lib, file) => import(pathToFileURL(path.resolve(lib, file)).href)

const {JavaJunitParser} = await load(dornyLib, 'parsers/java-junit/java-junit-parser.js')
const dorny = await new JavaJunitParser({parseErrors: true, workDir: '', trackedFiles: []})
  .parse(junit, readFileSync(junit, 'utf8'))
const cases = dorny.suites.flatMap(suite => suite.groups.flatMap(group => group.tests))
const dornyCount = result => cases.filter(test => test.result === result).length
console.log(`dorny tests=${cases.length} failed=${dornyCount('failed')} skipped=${dornyCount('skipped')}`)

const {parseTestReports} = await load(mikepenzLib, 'testParser.js')
// includePassed and annotateNotice on, so every testcase yields an annotation;
// failOnParseError on, so an unreadable file is an error rather than no file.
const mikepenz = await parseTestReports('perfgate', '', junit, '', true, true, false, [], undefined, '/', '', [],
  false, -1, true, true, false)
if (mikepenz.foundFiles !== 1) throw new Error(`mikepenz found ${mikepenz.foundFiles} files for ${junit}`)
console.log(`mikepenz tests=${mikepenz.totalCount} failed=${mikepenz.failed} skipped=${mikepenz.skipped}`)
for (const annotation of mikepenz.globalAnnotations) {
  console.log(`annotation ${annotation.annotation_level} ${annotation.path}`)
}
