// Package metricsserver serves a component's Prometheus metrics over HTTPS to the callers the
// cluster authorizes, as the kubelet and kube-controller-manager do: a bearer token that
// kube-apiserver authenticates (TokenReview) and allows to get the non-resource URL /metrics
// (SubjectAccessReview), both cached.
package metricsserver

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Handler serves the collectors' metrics at Path to callers that authn authenticates and
// authz allows to get the non-resource URL Path.
func Handler(authn authenticator.Request, authz authorizer.Authorizer, collectors ...metrics.StableCollector) http.Handler {
	registry := metrics.NewKubeRegistry()
	registry.CustomMustRegister(collectors...)
	serve := metrics.HandlerFor(registry, metrics.HandlerOpts{ErrorHandling: metrics.ContinueOnError})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path {
			http.NotFound(w, r)
			return
		}
		resp, ok, err := authn.AuthenticateRequest(r)
		if err != nil || !ok {
			klog.FromContext(r.Context()).V(2).Info("Metrics request not authenticated", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "Unauthorized: send a bearer token of the cluster", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{User: resp.User, Verb: "get", Path: Path}
		decision, reason, err := authz.Authorize(r.Context(), attrs)
		if err != nil || decision != authorizer.DecisionAllow {
			msg := fmt.Sprintf("Forbidden: user %q may not get %s", resp.User.GetName(), Path)
			if reason != "" {
				msg += ": " + reason
			}
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// Delegated authenticates bearer tokens and authorizes requests through kube-apiserver (the
// caller's service account needs system:auth-delegator).
func Delegated(kube kubernetes.Interface) (authenticator.Request, authorizer.Authorizer, error) {
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient:  kube.AuthenticationV1(),
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      webhookBackoff(),
		CacheTTL:                 2 * time.Minute,
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("the metrics endpoint's authentication: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: kube.AuthorizationV1(),
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       webhookBackoff(),
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("the metrics endpoint's authorization: %w", err)
	}
	return authn, authz, nil
}

// webhookBackoff retries a TokenReview or SubjectAccessReview that failed (as kube-apiserver's
// webhooks do by default).
func webhookBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// Server is an HTTPS server of Handler on addr with cert.
func Server(addr string, cert tls.Certificate, kube kubernetes.Interface, collectors ...metrics.StableCollector) (*http.Server, error) {
	authn, authz, err := Delegated(kube)
	if err != nil {
		return nil, err
	}
	return &http.Server{
		Addr:              addr,
		Handler:           Handler(authn, authz, collectors...),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
	}, nil
}
