package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	nvclient "github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

// A paginated list is read three ways, because most of the time a client spends on a large list
// can be its own JSON decoding rather than the server's work:
//   - received: every page read to its last byte as HTTP (the server's time plus the transfer;
//     only each page's metadata is decoded, for the continue token). This is the list latency
//     the server is responsible for, as in Kubernetes' own list SLI.
//   - typed: KubeVirt's Go client (our generated clientset, JSON-identical types) decoding every
//     page into VirtualMachineList, as controllers and Go programs read.
//   - dynamic: client-go's dynamic client decoding into unstructured maps, as kubectl -o json
//     and the other suites of this benchmark do.

// pagedRead is one way of reading a paginated list: it returns the pages and objects read (objects
// is -1 when the reader does not decode them).
type pagedRead func(ctx context.Context, limit int64) (pages, objects int, err error)

// timePaged runs read and returns how long it took.
func timePaged(ctx context.Context, read pagedRead, limit int64) (pages, objects int, d time.Duration, err error) {
	t0 := time.Now()
	pages, objects, err = read(ctx, limit)
	return pages, objects, time.Since(t0), err
}

// paginate requests pages with page until the server returns no continue token; page returns a
// page's object count and continue token.
func paginate(ctx context.Context, limit int64, page func(ctx context.Context, opts metav1.ListOptions) (int, string, error)) (pages, objects int, err error) {
	opts := metav1.ListOptions{Limit: limit}
	for {
		n, cont, err := page(ctx, opts)
		if err != nil {
			return pages, objects, err
		}
		pages++
		objects += n
		if cont == "" {
			return pages, objects, nil
		}
		opts.Continue = cont
	}
}

// dynamicPaged reads with client-go's dynamic client.
func dynamicPaged(r dynamic.ResourceInterface) pagedRead {
	return func(ctx context.Context, limit int64) (int, int, error) {
		return paginate(ctx, limit, func(ctx context.Context, opts metav1.ListOptions) (int, string, error) {
			l, err := r.List(ctx, opts)
			if err != nil {
				return 0, "", err
			}
			return len(l.Items), l.GetContinue(), nil
		})
	}
}

// typedPaged reads kubevirt.io/v1 VirtualMachines of namespace ("" for all) with the typed
// clientset, on a connection of its own.
func typedPaged(cfg *rest.Config, namespace string) (pagedRead, error) {
	cs, err := nvclient.NewForConfig(benchConfig(cfg, time.Minute))
	if err != nil {
		return nil, err
	}
	vms := cs.KubevirtV1().VirtualMachines(namespace)
	return func(ctx context.Context, limit int64) (int, int, error) {
		return paginate(ctx, limit, func(ctx context.Context, opts metav1.ListOptions) (int, string, error) {
			l, err := vms.List(ctx, opts)
			if err != nil {
				return 0, "", err
			}
			return len(l.Items), l.Continue, nil
		})
	}, nil
}

// receivedPaged reads the pages of t's resource in namespace ("" for all) as bytes, through the
// same transport client-go would use (authentication, TLS, gzip negotiated as client-go does).
func receivedPaged(t Target, namespace string) (pagedRead, error) {
	hc, err := rest.HTTPClientFor(benchConfig(t.Config, time.Minute))
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(t.Config.Host)
	if err != nil {
		return nil, err
	}
	p := []string{base.Path, "apis", t.Resource.Group, t.Resource.Version}
	if namespace != "" {
		p = append(p, "namespaces", namespace)
	}
	base.Path = path.Join(append(p, t.Resource.Resource)...)
	return func(ctx context.Context, limit int64) (int, int, error) {
		pages, _, err := paginate(ctx, limit, func(ctx context.Context, opts metav1.ListOptions) (int, string, error) {
			u := *base
			q := url.Values{"limit": {fmt.Sprint(opts.Limit)}}
			if opts.Continue != "" {
				q.Set("continue", opts.Continue)
			}
			u.RawQuery = q.Encode()
			cont, err := receivePage(ctx, hc, u.String())
			return 0, cont, err
		})
		return pages, -1, err // the objects are not decoded, hence not counted
	}, nil
}

// receivePage GETs one page, reads it to the end and returns its continue token.
func receivePage(ctx context.Context, hc *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	cont, err := listContinue(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return cont, err
}

// listContinue reads a JSON list from r up to its metadata and returns metadata.continue. Lists
// are written kind, apiVersion, metadata, items; any other key before metadata is skipped whole.
func listContinue(r io.Reader) (string, error) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object (%v, %v)", tok, err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return "", err
		}
		if key == "metadata" {
			var m metav1.ListMeta
			if err := dec.Decode(&m); err != nil {
				return "", fmt.Errorf("list metadata: %w", err)
			}
			return m.Continue, nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no metadata in the list")
}

// pagedReader is a named pagedRead; key prefixes its JSON record.
type pagedReader struct {
	name, key string
	read      pagedRead
}

// pagedReaders are the ways a scale read target is listed, the received bytes first. ri is the
// dynamic client's view of the same resource and scope; the typed client reads only
// kubevirt.io/v1 VirtualMachines.
func pagedReaders(t Target, namespace string, ri dynamic.ResourceInterface) ([]pagedReader, error) {
	received, err := receivedPaged(t, namespace)
	if err != nil {
		return nil, err
	}
	out := []pagedReader{{name: "all pages received", read: received}}
	if t.Resource == VMResource {
		typed, err := typedPaged(t.Config, namespace)
		if err != nil {
			return nil, err
		}
		out = append(out, pagedReader{name: "decoded by KubeVirt's typed Go client", key: "typed-", read: typed})
	}
	return append(out, pagedReader{name: "decoded by client-go's dynamic client (as kubectl -o json)", key: "dynamic-", read: dynamicPaged(ri)}), nil
}
