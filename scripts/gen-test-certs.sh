#!/bin/sh
# gen-test-certs.sh DIR: a throw-away test PKI for TLS tests and demos.
#   ca.pem/ca.key              the test CA
#   server.pem/server.key      CN=rmq-server, SAN 127.0.0.1 and localhost, server+client auth
#                              (daemons use it for their port and their own outgoing links)
#   client.pem/client.key      CN=rmq-client, client auth, signed by ca.pem
#   other-ca.pem               an unrelated CA
#   other-client.pem/.key      a client certificate signed by other-ca.pem
# Keys are generated fresh each run (EC P-256) and never committed.
set -eu
dir=${1:?usage: gen-test-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
days=2
ossl() { openssl "$@" 2>/dev/null; }

newca() { # name cn
    ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
        -out "$1.pem" -days $days -subj "/CN=$2" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}

leaf() { # name cn ca ext
    ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
        -out "$1.csr" -subj "/CN=$2"
    printf '%s\n' "$4" > "$1.ext"
    ossl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -CAcreateserial \
        -out "$1.pem" -days $days -extfile "$1.ext"
    rm -f "$1.csr" "$1.ext"
}

newca ca "rmq test CA"
newca other-ca "unrelated test CA"
leaf server rmq-server ca "basicConstraints=CA:FALSE
keyUsage=digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
leaf client rmq-client ca "basicConstraints=CA:FALSE
keyUsage=digitalSignature
extendedKeyUsage=clientAuth"
leaf other-client other-client other-ca "basicConstraints=CA:FALSE
keyUsage=digitalSignature
extendedKeyUsage=clientAuth"
chmod 600 ./*.key
