package metrics

import (
	"fmt"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Handler serves the collector's metrics at Path to callers that authn authenticates (a bearer
// token, by TokenReview) and authz allows to get the non-resource URL /metrics (by
// SubjectAccessReview): what Prometheus's service account is granted to scrape the kubelet.
func Handler(c *Collector, authn authenticator.Request, authz authorizer.Authorizer) http.Handler {
	registry := metrics.NewKubeRegistry()
	registry.CustomMustRegister(c)
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
