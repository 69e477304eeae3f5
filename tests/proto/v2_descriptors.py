#!/usr/bin/env python3
"""Compares two FileDescriptorSets in protoc's text form (protoc --decode=
google.protobuf.FileDescriptorSet): ours (proto/apache/rocketmq/v2) against
apache/rocketmq-apis. Every message, field, enum value and method of ours
must exist upstream with the same number, label, type and type name, and a
field in a oneof upstream must be in the oneof of the same name in ours
(proto3 `optional` is the synthetic oneof `_name`). Prints what upstream
has that ours leaves out, one line each, and exits 1 on any mismatch.
Usage: v2_descriptors.py OURS.txt UPSTREAM.txt"""
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


def main():
    ours = index(parse(open(sys.argv[1]).read()))
    theirs = index(parse(open(sys.argv[2]).read()))
    bad = 0
    for kind, members in sorted(ours.items()):
        if kind not in theirs:
            print('MISMATCH %s: not upstream' % kind)
            bad += 1
            continue
        for name, spec in sorted(members.items()):
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
