#!/usr/bin/env python3
"""Checks that every repository path the documentation names exists.

Usage: check-doc-paths.py [REPO_ROOT]   (default: the folder above this script)

Scans README.md, benchmarks/README.md, tests/README.md, python/README.md and
docs/*.md. A candidate is the target of a Markdown link, or a word of an
inline `code` span (fenced code blocks are commands, not references, and are
skipped), that looks like a repository path: it contains a '/' (and its first
part is a folder of the repository, or it ends in a known extension), or it
is a bare file name with a known extension. A path is found if it exists
relative to the repository root or to the document's own folder; a bare file
name is also found if a file of that name exists anywhere in the repository.
Ignored: URLs, absolute paths, paths outside the repository, build folders
(build/, build-*/, out/), and globs or placeholders ('*', '<', '$', '{').

Prints each missing path as FILE:LINE: PATH and exits 1 if there is one.
"""
import os
import re
import sys

EXTENSIONS = ('.md', '.cpp', '.h', '.py', '.sh', '.cmake', '.txt', '.json', '.jsonl', '.def', '.svg',
              '.onnx', '.onnxtxt', '.cfg', '.toml')
SKIP_DIRS = {'.git', '__pycache__', 'node_modules'}
PLACEHOLDER = re.compile(r'[*<>${}]')
PATH_CHARS = re.compile(r'^[A-Za-z0-9_.+\-/]+$')
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
CODE_SPAN = re.compile(r'(`+)(.+?)\1')


def documents(root):
    names = ['README.md', 'benchmarks/README.md', 'tests/README.md', 'python/README.md']
    docs = os.path.join(root, 'docs')
    if os.path.isdir(docs):
        names += sorted('docs/' + n for n in os.listdir(docs) if n.endswith('.md'))
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def is_build_folder(part):
    return part in ('build', 'out') or part.startswith('build-') or part.startswith('.venv')


def repository_basenames(root):
    names = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not is_build_folder(d)]
        names.update(files)
    return names


def candidates(text):
    """Yields the words of a line that may be repository paths."""
    for m in LINK.finditer(text):
        target = m.group(1).split('#', 1)[0]
        if target:
            yield target
    for m in CODE_SPAN.finditer(text):
        for word in m.group(2).split():
            # --flag=path, -DVAR=path, name=path: the value.
            if '=' in word:
                word = word.rsplit('=', 1)[1]
            word = word.strip('\'"(),;:')
            word = word.rstrip('.')
            if word:
                yield word


def looks_like_path(word, root, doc_dir):
    if not word or '://' in word or word.startswith(('/', '~', '#', 'mailto:')):
        return False
    if PLACEHOLDER.search(word) or not PATH_CHARS.match(word):
        return False
    if word.startswith('-'):
        return False
    parts = [p for p in word.split('/') if p not in ('', '.')]
    if not parts:
        return False
    first = parts[0]
    if is_build_folder(first):
        return False
    has_extension = word.lower().endswith(EXTENSIONS)
    if '/' in word.strip('/'):
        if has_extension or first == '..':
            return True
        return (os.path.isdir(os.path.join(root, first)) or os.path.isdir(os.path.join(doc_dir, first)))
    if word.endswith('/'):
        return os.path.isdir(os.path.join(root, first)) or os.path.isdir(os.path.join(doc_dir, first))
    return has_extension


def found(word, root, doc_dir, basenames):
    root_real = os.path.realpath(root)
    inside = False
    for base in (root, doc_dir):
        path = os.path.realpath(os.path.join(base, word))
        if path != root_real and not path.startswith(root_real + os.sep):
            continue  # outside the repository: not a repository path
        inside = True
        if os.path.exists(path):
            return True
    if not inside:
        return True
    if '/' not in word.strip('/') and word in basenames:
        return True
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    root = os.path.abspath(root)
    basenames = repository_basenames(root)
    missing = []
    checked = 0
    for name in documents(root):
        doc_dir = os.path.dirname(os.path.join(root, name))
        in_fence = False
        with open(os.path.join(root, name), encoding='utf-8') as f:
            for number, line in enumerate(f, 1):
                if line.lstrip().startswith(('```', '~~~')):
                    in_fence = not in_fence
                    continue
                if in_fence:
                    continue
                for word in candidates(line):
                    if not looks_like_path(word, root, doc_dir):
                        continue
                    checked += 1
                    if not found(word, root, doc_dir, basenames):
                        missing.append('%s:%d: %s' % (name, number, word))
    for m in missing:
        print(m)
    if missing:
        print('check-doc-paths: %d missing path(s) of %d named' % (len(missing), checked))
        return 1
    print('check-doc-paths: all %d named paths exist' % checked)
    return 0


if __name__ == '__main__':
    sys.exit(main())
