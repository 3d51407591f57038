#!/usr/bin/env bash
# Makes the TLS material of the production overlay's etcd cluster with openssl: a CA, the
# members' peer and serving certificates, and nativevirt-apiserver's client certificate. Then
# prints the kubectl commands that turn them into the Secrets etcd.yaml and apiserver.yaml mount.
#
#   artifacts/deploy/overlays/production/etcd-certs.sh OUT_DIR
#
# OUT_DIR gets ca.{crt,key}, peer.{crt,key}, server.{crt,key}, client.{crt,key} (keys mode 0600).
# An existing CA in OUT_DIR is reused, so certificates can be reissued without a new CA; keep
# ca.key offline once the certificates exist. Environment: DAYS (validity, default 825).
set -euo pipefail

[[ $# -eq 1 ]] || { sed -n '7p' "${BASH_SOURCE[0]}" >&2; exit 2; }
out=$1
ns=nativevirt
days=${DAYS:-825}
svc=nativevirt-etcd
mkdir -p "$out"
umask 077

if [[ ! -s $out/ca.crt || ! -s $out/ca.key ]]; then
	openssl req -x509 -new -newkey rsa:2048 -nodes -sha256 -days "$days" \
		-subj "/CN=nativevirt-etcd-ca" -keyout "$out/ca.key" -out "$out/ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi

# The members' names: each one explicitly (etcd checks that a peer's DNS names resolve to its
# address) and as wildcards, plus loopback for etcdctl inside a member's pod.
sans="DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local,DNS:*.$svc.$ns.svc,DNS:*.$svc.$ns.svc.cluster.local"
for i in 0 1 2; do
	sans+=",DNS:$svc-$i.$svc.$ns.svc,DNS:$svc-$i.$svc.$ns.svc.cluster.local"
done
sans+=",DNS:localhost,IP:127.0.0.1"

# issue NAME CN EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES]
issue() {
	local name=$1 cn=$2 eku=$3 san=${4:-} ext
	ext=$(mktemp)
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[[ -n $san ]] && echo "subjectAltName=$san"
	} >"$ext"
	openssl req -new -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$out/$name.key" 2>/dev/null |
		openssl x509 -req -sha256 -days "$days" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
			-extfile "$ext" -out "$out/$name.crt" 2>/dev/null
	rm -f "$ext"
}

# Peers are servers and clients of each other. The serving certificate is also used as a client
# certificate by etcd's own gRPC gateway, hence clientAuth there too.
issue peer nativevirt-etcd-peer serverAuth,clientAuth "$sans"
issue server nativevirt-etcd-server serverAuth,clientAuth "$sans"
issue client nativevirt-apiserver clientAuth
rm -f "$out/ca.srl"

cat <<EOF
Certificates in $out. Create the Secrets (namespace $ns must exist):
  kubectl -n $ns create secret generic nativevirt-etcd-peer --from-file=tls.crt=$out/peer.crt --from-file=tls.key=$out/peer.key --from-file=ca.crt=$out/ca.crt
  kubectl -n $ns create secret generic nativevirt-etcd-server --from-file=tls.crt=$out/server.crt --from-file=tls.key=$out/server.key --from-file=ca.crt=$out/ca.crt
  kubectl -n $ns create secret generic nativevirt-apiserver-etcd-client --from-file=tls.crt=$out/client.crt --from-file=tls.key=$out/client.key --from-file=ca.crt=$out/ca.crt
EOF
