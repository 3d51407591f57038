#!/usr/bin/env bash
# PKI, tokens and kubeconfigs of the local cluster, made with openssl at first start and kept
# under $NV_PKI. Sourced after lib.sh, never run.
#
#   ca.crt/key               cluster CA: kube-apiserver serving cert, kubelet client cert,
#                            kubelet's client CA (kube-apiserver -> kubelet)
#   apiserver.crt/key        kube-apiserver serving cert (SANs below)
#   apiserver-kubelet-client kube-apiserver's client cert towards the kubelet
#   front-proxy-ca.crt/key   --requestheader-client-ca-file
#   front-proxy-client       kube-apiserver's client cert towards aggregated apiservers
#   sa.key/sa.pub            service-account token signing
#   serving-ca.crt/key       CA of the serving certs of aggregated apiservers (APIService.caBundle)
#   tokens.csv               --token-auth-file: admin, components, test users

NV_API_SANS=(
	"IP:$NV_BRIDGE_IP" "IP:127.0.0.1" "IP:$NV_SERVICE_IP"
	"DNS:localhost" "DNS:kubernetes" "DNS:kubernetes.default" "DNS:kubernetes.default.svc"
	"DNS:kubernetes.default.svc.cluster.local"
)

# nv_pki_ca NAME CN: a self-signed CA NAME.crt/NAME.key in $NV_PKI, kept when present.
nv_pki_ca() {
	local name=$1 cn=$2
	[[ -s $NV_PKI/$name.crt && -s $NV_PKI/$name.key ]] && return 0
	openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
		-keyout "$NV_PKI/$name.key" -out "$NV_PKI/$name.crt" -subj "/CN=$cn" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
	chmod 600 "$NV_PKI/$name.key"
}

# nv_pki_issue CA OUT_CRT OUT_KEY SUBJECT USAGE [SAN...]: a leaf cert signed by $NV_PKI/CA.
# USAGE is server, client or server+client (a node agent's cert: it serves the stream endpoint
# and opens migration tunnels to other node agents as a client). The cert is kept when present,
# signed by the same CA and (for server certs) carrying the same SANs; otherwise it is issued
# again.
nv_pki_issue() {
	local ca=$1 crt=$2 key=$3 subject=$4 usage=$5
	shift 5
	local sans
	sans=$(
		IFS=,
		echo "$*"
	)
	local want
	want="$subject|$usage|$sans|$(openssl x509 -noout -fingerprint -sha256 -in "$NV_PKI/$ca.crt")"
	# What the cert was issued for is remembered beside the PKI, not beside the cert: OUT dirs
	# of nv_serving_cert may be turned into Secrets file by file.
	mkdir -p "$NV_PKI/issued"
	local spec
	spec=$NV_PKI/issued/$(echo "$crt" | sha256sum | cut -c1-16).spec
	if [[ -s $crt && -s $key && -f $spec && $(<"$spec") == "$want" ]]; then
		return 0
	fi
	local ext eku
	case $usage in
	server) eku=serverAuth ;;
	client) eku=clientAuth ;;
	server+client) eku=serverAuth,clientAuth ;;
	*) nv_die "nv_pki_issue: usage must be server, client or server+client, not $usage" ;;
	esac
	ext=$(mktemp)
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[[ -n $sans ]] && echo "subjectAltName=$sans"
	} >"$ext"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$key" -subj "$subject" 2>/dev/null |
		openssl x509 -req -sha256 -days 3650 -CA "$NV_PKI/$ca.crt" -CAkey "$NV_PKI/$ca.key" \
			-CAcreateserial -extfile "$ext" -out "$crt" 2>/dev/null
	rm -f "$ext"
	chmod 600 "$key"
	echo "$want" >"$spec"
}

# nv_pki_tokens: the token file, one random token per identity; identities added to the lists
# after the first start are appended, and NV_TOKENS_ADDED says so (kube-apiserver reads the
# file when it starts).
NV_TOKENS_ADDED=0
nv_pki_tokens() {
	local f=$NV_PKI/tokens.csv
	touch "$f"
	chmod 600 "$f"
	# user uid groups
	local -a ids=(
		"admin admin system:masters"
		"system:kube-controller-manager kube-controller-manager -"
		"system:kube-scheduler kube-scheduler -"
		"system:kube-proxy kube-proxy -"
		"system:multus multus -"
	)
	# Every node a cluster may have, so that a cluster can grow without a new token file.
	local u i n
	for ((i = 1; i <= NV_MAX_NODES; i++)); do
		n=$(nv_node_name "$i")
		ids+=("system:node:$n node-$n system:nodes")
	done
	for u in "${NV_TEST_USERS[@]}"; do
		ids+=("$u $u -")
	done
	local id user uid groups
	for id in "${ids[@]}"; do
		read -r user uid groups <<<"$id"
		[[ -n $(nv_token "$user") ]] && continue
		# shellcheck disable=SC2034 # read by up.sh, which sources pki.sh.
		NV_TOKENS_ADDED=1
		if [[ $groups == - ]]; then
			echo "$(openssl rand -hex 24),$user,$uid" >>"$f"
		else
			echo "$(openssl rand -hex 24),$user,$uid,\"$groups\"" >>"$f"
		fi
	done
}

# nv_kubeconfig FILE USER: a kubeconfig for USER (token auth) that trusts the cluster CA.
nv_kubeconfig() {
	local file=$1 user=$2 token ca
	token=$(nv_token "$user")
	[[ -n $token ]] || nv_die "no token for $user in $NV_PKI/tokens.csv"
	ca=$(base64 -w0 <"$NV_PKI/ca.crt")
	local tmp=$file.tmp
	cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: nativevirt-local
  cluster:
    server: $NV_API_URL
    certificate-authority-data: $ca
users:
- name: $user
  user:
    token: $token
contexts:
- name: $user@nativevirt-local
  context:
    cluster: nativevirt-local
    user: $user
    namespace: default
current-context: $user@nativevirt-local
EOF
	chmod 600 "$tmp"
	mv "$tmp" "$file"
}

# nv_pki_ensure: every key, cert, token and kubeconfig the cluster needs.
nv_pki_ensure() {
	mkdir -p "$NV_PKI" "$NV_KUBECONFIGS"
	chmod 700 "$NV_PKI"
	nv_pki_ca ca nativevirt-local-ca
	nv_pki_ca front-proxy-ca nativevirt-local-front-proxy-ca
	nv_pki_ca serving-ca nativevirt-local-serving-ca
	nv_pki_issue ca "$NV_PKI/apiserver.crt" "$NV_PKI/apiserver.key" /CN=kube-apiserver server "${NV_API_SANS[@]}"
	nv_pki_issue ca "$NV_PKI/apiserver-kubelet-client.crt" "$NV_PKI/apiserver-kubelet-client.key" \
		"/O=system:masters/CN=kube-apiserver-kubelet-client" client
	nv_pki_issue front-proxy-ca "$NV_PKI/front-proxy-client.crt" "$NV_PKI/front-proxy-client.key" \
		/CN=front-proxy-client client
	if [[ ! -s $NV_PKI/sa.key ]]; then
		openssl genrsa -out "$NV_PKI/sa.key" 2048 2>/dev/null
		chmod 600 "$NV_PKI/sa.key"
	fi
	[[ -s $NV_PKI/sa.pub ]] || openssl rsa -in "$NV_PKI/sa.key" -pubout -out "$NV_PKI/sa.pub" 2>/dev/null
	nv_pki_tokens
	nv_kubeconfig "$NV_KUBECONFIG" admin
	nv_kubeconfig "$NV_KUBECONFIGS/kube-controller-manager.kubeconfig" system:kube-controller-manager
	nv_kubeconfig "$NV_KUBECONFIGS/kube-scheduler.kubeconfig" system:kube-scheduler
	nv_kubeconfig "$NV_KUBECONFIGS/kube-proxy.kubeconfig" system:kube-proxy
	nv_kubeconfig "$NV_KUBECONFIGS/multus.kubeconfig" system:multus
	local u n
	for n in $(nv_node_names); do
		nv_kubeconfig "$NV_KUBECONFIGS/kubelet-$n.kubeconfig" "system:node:$n"
	done
	for u in "${NV_TEST_USERS[@]}"; do
		nv_kubeconfig "$NV_KUBECONFIGS/$u.kubeconfig" "$u"
	done
}

# nv_serving_cert OUT_DIR DNS_NAME...: tls.crt/tls.key for an aggregated apiserver, signed by the
# serving CA, plus ca.crt; prints the base64 CA bundle for APIService.spec.caBundle.
nv_serving_cert() {
	local out=$1
	shift
	[[ $# -gt 0 ]] || nv_die "nv_serving_cert: no DNS names"
	mkdir -p "$NV_PKI" "$out"
	nv_pki_ca serving-ca nativevirt-local-serving-ca
	local sans=() n
	for n in "$@"; do
		sans+=("DNS:$n")
	done
	nv_pki_issue serving-ca "$out/tls.crt" "$out/tls.key" "/CN=$1" server "${sans[@]}"
	cp "$NV_PKI/serving-ca.crt" "$out/ca.crt"
	base64 -w0 <"$NV_PKI/serving-ca.crt"
	echo
}
