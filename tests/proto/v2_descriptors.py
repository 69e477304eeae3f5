#!/usr/bin/env python3
"""Compares two FileDescriptorSets in protoc's text form (protoc --decode=
google.protobuf.FileDescriptorSet): ours (proto/apache/rocketmq/v2) against
apache/rocketmq-apis. Every message, field, enum value and method of ours
must exist upstream with the same number, label, type and type name, and a
field in a oneof upstream must be in the oneof of the same name in ours
(proto3 `optional` is the synthetic oneof `_name`). Prints what upstream
has that ours leaves out, one line each, and exits 1 on any mismatch.
With --newer NEWER.txt, a definition or member of ours named in NEWER.txt
(one a line, as a MISMATCH line names it; # starts a comment) may be absent
upstream: upstream is then a release older than the apache/rocketmq-apis
commit ours follows. When upstream has it, it is compared as any other.
Usage: v2_descriptors.py [--newer NEWER.txt] OURS.txt UPSTREAM.txt"""
import re
import sys


def parse(text):
    """Text-format message -> nested dict of lists."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{}]|[^\s{}:]+:?', text)
    pos = 0

    def block():
        nonlocal pos
        node = {}
        while pos < len(tokens) and tokens[pos] != '}':
            key = tokens[pos]
            pos += 1
            if key.endswith(':'):
                value = tokens[pos].strip('"')
                pos += 1
                node.setdefault(key[:-1], []).append(value)
            else:
                pos += 1                       # '{'
                child = block()
                pos += 1                       # '}'
                node.setdefault(key, []).append(child)
        return node
    return block()


def one(node, key, default=''):
    return node.get(key, [default])[0]


def index(fds):
    """{'message X': {field: (...)}, 'enum E': {value: n}, 'service S': {m: (...)}}"""
    out = {}

    def messages(prefix, msgs):
        for m in msgs:
            name = prefix + '.' + one(m, 'name')
            oneofs = [one(o, 'name') for o in m.get('oneof_decl', [])]
            fields = {}
            for f in m.get('field', []):
                oi = one(f, 'oneof_index', None)
                fields[one(f, 'name')] = (one(f, 'number'), one(f, 'label'), one(f, 'type'),
                                          one(f, 'type_name'), oneofs[int(oi)] if oi is not None else '')
            out['message ' + name] = fields
            messages(name, m.get('nested_type', []))
            enums(name, m.get('enum_type', []))

    def enums(prefix, es):
        for e in es:
            out['enum ' + prefix + '.' + one(e, 'name')] = {
                one(v, 'name'): one(v, 'number') for v in e.get('value', [])}

    for f in fds.get('file', []):
        pkg = '.' + one(f, 'package')
        messages(pkg, f.get('message_type', []))
        enums(pkg, f.get('enum_type', []))
        for s in f.get('service', []):
            out['service ' + pkg + '.' + one(s, 'name')] = {
                one(m, 'name'): (one(m, 'input_type'), one(m, 'output_type'),
                                 one(m, 'client_streaming', 'false'), one(m, 'server_streaming', 'false'))
                for m in s.get('method', [])}
    return out


def newer_names(path):
    """The names listed in a --newer file."""
    with open(path) as f:
        return {line.split('#')[0].strip() for line in f} - {''}


def main():
    args = sys.argv[1:]
    newer = set()
    if len(args) == 4 and args[0] == '--newer':
        newer = newer_names(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    ours = index(parse(open(args[0]).read()))
    theirs = index(parse(open(args[1]).read()))
    bad = 0
    for kind, members in sorted(ours.items()):
        if kind not in theirs:
            if kind in newer:
                print('newer than upstream: %s' % kind)
                continue
            print('MISMATCH %s: not upstream' % kind)
            bad += 1
            continue
        for name, spec in sorted(members.items()):
            if name not in theirs[kind] and '%s.%s' % (kind, name) in newer:
                print('newer than upstream: %s.%s' % (kind, name))
                continue
            if theirs[kind].get(name) != spec:
                print('MISMATCH %s.%s: ours %s, upstream %s' % (kind, name, spec, theirs[kind].get(name)))
                bad += 1
    for kind, members in sorted(theirs.items()):
        if kind not in ours:
            print('left out: %s' % kind)
            continue
        for name in sorted(set(members) - set(ours[kind])):
            print('left out: %s.%s' % (kind, name))
    checked = sum(len(m) for m in ours.values())
    print('%d definitions, %d members checked, %d mismatches' % (len(ours), checked, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
