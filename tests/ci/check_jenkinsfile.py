#!/usr/bin/python3
"""A syntax check of declarative Jenkins pipelines, for a machine without Jenkins.

Reads the file the way Groovy does as far as nesting goes (comments, the four
string quotings, ${...} inside double-quoted strings), requires balanced
brackets and closed strings, and then checks the declarative structure:
one pipeline block with an agent and stages, known sections, stages made of
named stage blocks, each stage with exactly one of steps, parallel, stages
or matrix, parallel blocks holding only stages, known post conditions.

Usage: check_jenkinsfile.py FILE...  Exit 0 when all pass, else 1 with one
"file:line: message" per problem.
"""
import sys


class CheckError(Exception):
    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


OPEN = {'(': ')', '[': ']', '{': '}'}
CLOSE = {v: k for k, v in OPEN.items()}

PIPELINE_SECTIONS = {'agent', 'stages', 'post', 'environment', 'options', 'parameters', 'triggers', 'tools',
                     'libraries'}
STAGE_SECTIONS = {'agent', 'environment', 'options', 'when', 'post', 'tools', 'input', 'failFast', 'steps',
                  'parallel', 'stages', 'matrix'}
STAGE_BODIES = {'steps', 'parallel', 'stages', 'matrix'}
POST_CONDITIONS = {'always', 'changed', 'fixed', 'regression', 'aborted', 'failure', 'success', 'unstable',
                   'unsuccessful', 'cleanup', 'notBuilt'}


class Tokenizer:
    """Tokens (kind, text, line): kind is 'id', 'str', 'nl' or the bracket or other character."""

    def __init__(self, text):
        self.text = text
        self.i = 0
        self.line = 1
        self.tokens = []

    def peek(self, s):
        return self.text.startswith(s, self.i)

    def advance(self, n=1):
        self.line += self.text.count('\n', self.i, self.i + n)
        self.i += n

    def run(self):
        self.code(top=True)
        return self.tokens

    def code(self, top):
        """Code up to the '}' that closes a ${ (not top) or the end (top); brackets must pair."""
        stack = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if self.peek('//'):
                end = self.text.find('\n', self.i)
                self.advance((len(self.text) if end < 0 else end) - self.i)
            elif self.peek('/*'):
                end = self.text.find('*/', self.i + 2)
                if end < 0:
                    raise CheckError(self.line, 'unterminated /* comment')
                self.advance(end + 2 - self.i)
            elif c in '\'"':
                self.string()
            elif c == '\n':
                self.tokens.append(('nl', c, self.line))
                self.advance()
            elif c.isspace():
                self.advance()
            elif c == '\\' and self.peek('\\\n'):
                self.advance(2)
            elif c.isalnum() or c == '_' or c == '$':
                j = self.i
                while j < len(self.text) and (self.text[j].isalnum() or self.text[j] in '_$'):
                    j += 1
                self.tokens.append(('id', self.text[self.i:j], self.line))
                self.advance(j - self.i)
            elif c in OPEN:
                stack.append((c, self.line))
                self.tokens.append((c, c, self.line))
                self.advance()
            elif c in CLOSE:
                if not stack:
                    if c == '}' and not top:
                        self.advance()
                        return
                    raise CheckError(self.line, "'%s' closes nothing" % c)
                opener, line = stack.pop()
                if opener != CLOSE[c]:
                    raise CheckError(self.line, "'%s' closes the '%s' of line %d" % (c, opener, line))
                self.tokens.append((c, c, self.line))
                self.advance()
            else:
                self.tokens.append((c, c, self.line))
                self.advance()
        if not top:
            raise CheckError(self.line, 'unterminated ${ in a string')
        if stack:
            opener, line = stack[-1]
            raise CheckError(line, "'%s' is never closed" % opener)

    def string(self):
        start = self.line
        quote = self.text[self.i]
        delim = quote * 3 if self.peek(quote * 3) else quote
        self.advance(len(delim))
        interpolated = quote == '"'
        while True:
            if self.i >= len(self.text):
                raise CheckError(start, 'unterminated string')
            c = self.text[self.i]
            if c == '\\':
                self.advance(2)
            elif self.peek(delim):
                self.advance(len(delim))
                break
            elif c == '\n' and len(delim) == 1:
                raise CheckError(start, 'unterminated string')
            elif interpolated and self.peek('${'):
                self.advance(2)
                saved = self.tokens
                self.tokens = []
                self.code(top=False)
                self.tokens = saved
            else:
                self.advance()
        self.tokens.append(('str', delim, start))


class Statement:
    def __init__(self, line):
        self.line = line
        self.head = []   # tokens before the block
        self.block = None  # list of Statement, or None

    @property
    def name(self):
        return self.head[0][1] if self.head and self.head[0][0] == 'id' else None

    def string_arg(self):
        """The string in name('...') or name "...", else None."""
        for kind, _, _ in self.head[1:]:
            if kind == 'str':
                return True
        return None


def parse(tokens, i=0, closing=False):
    """Statements up to the matching '}' (closing) or the end; (statements, next index)."""
    statements = []
    current = None
    depth = 0  # () and [] nesting inside a statement
    while i < len(tokens):
        kind, text, line = tokens[i]
        if depth == 0 and kind in ('nl', ';'):
            current = None
            i += 1
            continue
        if depth == 0 and kind == '}':
            return statements, i + 1
        if current is None:
            current = Statement(line)
            statements.append(current)
        if kind in '([':
            depth += 1
        elif kind in ')]':
            depth -= 1
        if kind == '{':
            current.block, i = parse(tokens, i + 1, closing=True)
            if depth == 0:
                current = None
            continue
        current.head.append(tokens[i])
        i += 1
    return statements, i


def check_stage(stage, problems):
    if not stage.string_arg():
        problems.append((stage.line, 'a stage needs a name: stage(\'name\') { ... }'))
    if stage.block is None:
        problems.append((stage.line, 'stage has no block'))
        return
    bodies = [s for s in stage.block if s.name in STAGE_BODIES]
    if len(bodies) != 1:
        problems.append((stage.line, 'a stage needs exactly one of steps, parallel, stages or matrix, has %d'
                         % len(bodies)))
    for s in stage.block:
        if s.name not in STAGE_SECTIONS:
            problems.append((s.line, 'unknown section in a stage: %s' % s.name))
        elif s.name in ('parallel', 'stages'):
            check_stages(s, problems)
        elif s.name == 'post':
            check_post(s, problems)
        elif s.name == 'steps' and not s.block:
            problems.append((s.line, 'steps block is empty'))


def check_stages(block, problems):
    if block.block is None:
        problems.append((block.line, '%s needs a block' % block.name))
        return
    if not block.block:
        problems.append((block.line, '%s holds no stage' % block.name))
    for s in block.block:
        if s.name != 'stage':
            problems.append((s.line, '%s may hold only stage blocks, not %s' % (block.name, s.name)))
        else:
            check_stage(s, problems)


def check_post(post, problems):
    for s in post.block or []:
        if s.name not in POST_CONDITIONS:
            problems.append((s.line, 'unknown post condition: %s' % s.name))
        elif s.block is None:
            problems.append((s.line, 'post condition %s needs a block' % s.name))


def check_agent(agent, problems):
    if agent.block is None and [t[1] for t in agent.head[1:]] not in (['none'], ['any']):
        problems.append((agent.line, 'agent must be none, any or a block'))


def check(text):
    """The problems of a Jenkinsfile as (line, message)."""
    try:
        statements, _ = parse(Tokenizer(text).run())
    except CheckError as e:
        return [(e.line, e.message)]
    pipelines = [s for s in statements if s.name == 'pipeline' and s.block is not None]
    if len(pipelines) != 1:
        return [(1, 'expected one pipeline { ... } block at the top level, found %d' % len(pipelines))]
    pipeline = pipelines[0]
    problems = []
    names = [s.name for s in pipeline.block]
    for required in ('agent', 'stages'):
        if names.count(required) != 1:
            problems.append((pipeline.line, 'pipeline needs one %s section, has %d' % (required, names.count(required))))
    for s in pipeline.block:
        if s.name not in PIPELINE_SECTIONS:
            problems.append((s.line, 'unknown pipeline section: %s' % s.name))
        elif s.name == 'agent':
            check_agent(s, problems)
        elif s.name == 'stages':
            check_stages(s, problems)
        elif s.name == 'post':
            check_post(s, problems)
        elif s.block is None:
            problems.append((s.line, '%s needs a block' % s.name))
    return problems


def main(paths):
    failed = False
    for path in paths:
        with open(path, encoding='utf-8') as f:
            for line, message in check(f.read()):
                print('%s:%d: %s' % (path, line, message))
                failed = True
    if not failed:
        print('%d Jenkinsfile(s) OK' % len(paths))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
