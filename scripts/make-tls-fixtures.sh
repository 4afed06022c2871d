#!/bin/sh
# Makes the throwaway PKI of Tests/Fixtures/tls (test-only keys; nothing trusts them outside the
# tests): a CA, a second CA nobody trusts, and three leaf certificates signed by the first CA:
# valid.pem (DNS tls.test, IP 127.0.0.1; valid for 100 years), expired.pem (same names; its
# validity ends before it begins) and wrong.pem (DNS other.test only). Run it again to replace them.
set -eu
cd "$(dirname "$0")/../Tests/Fixtures/tls"
rm -f ./*.pem ./*.key ./*.srl
key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
century=36500
leaf() { # name subjectAltName days
    openssl req $key -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
    printf 'subjectAltName=%s\n' "$2" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$3" -extfile "$1.ext" \
        -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}
openssl req -x509 $key -keyout ca.key -out ca.pem -days $century -subj "/CN=OptoLink Test CA" 2>/dev/null
openssl req -x509 $key -keyout other-ca.key -out other-ca.pem -days $century -subj "/CN=Other CA" 2>/dev/null
leaf valid "DNS:tls.test,IP:127.0.0.1" $century
leaf expired "DNS:tls.test,IP:127.0.0.1" -1
leaf wrong "DNS:other.test" $century
rm -f ca.key other-ca.key ca.srl
