#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md resolves, and every page
of docs/ is reachable from README.md.

    docs/check-links.py SOURCE_DIR

A link to a file must name a file of the tree; a link with #anchor must name
a heading of that page (GitHub's anchors: lower case, punctuation dropped,
spaces to '-', repeats numbered). Links with a scheme (https:, mailto:) are
not followed. Exit 1 with one line per broken link.
"""
import os
import re
import sys

LINK = re.compile(r'(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
FENCE = re.compile(r'^\s*(```|~~~)')


def strip_code(lines):
    """The lines outside fenced code blocks, with inline code emptied."""
    out, fenced = [], False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
            out.append('')
            continue
        out.append('' if fenced else re.sub(r'`[^`]*`', '``', line))
    return out


def anchors(path):
    """GitHub's anchors for the headings of a Markdown page."""
    seen, result = {}, set()
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    fenced = False
    for line in lines:
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', m.group(2))  # a link's text only
        slug = re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f'{slug}-{n}')
    return result


def links(path):
    with open(path, encoding='utf-8') as f:
        text = '\n'.join(strip_code(f.read().split('\n')))
    for m in LINK.finditer(text):
        yield m.group(1) or m.group(2)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else '.')
    pages = ['README.md'] + sorted(
        os.path.join('docs', p) for p in os.listdir(os.path.join(root, 'docs')) if p.endswith('.md'))
    errors = []
    graph = {}
    for page in pages:
        graph[page] = set()
        for target in links(os.path.join(root, page)):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue
            file_part, _, anchor = target.partition('#')
            resolved = os.path.normpath(os.path.join(os.path.dirname(page), file_part)) if file_part else page
            full = os.path.join(root, resolved)
            if not os.path.exists(full):
                errors.append(f'{page}: link to {target}: no file {resolved}')
                continue
            if resolved.endswith('.md'):
                graph[page].add(resolved)
            if anchor and resolved.endswith('.md') and anchor not in anchors(full):
                errors.append(f'{page}: link to {target}: no heading #{anchor} in {resolved}')
    # Reachable from README.md through the pages' links.
    reached, todo = {'README.md'}, ['README.md']
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in reached:
                reached.add(nxt)
                todo.append(nxt)
    for page in pages:
        if page not in reached:
            errors.append(f'{page}: not reachable from README.md')
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f'{len(pages)} pages, every relative link resolves and every page is reachable from README.md')
    return 0


if __name__ == '__main__':
    sys.exit(main())
