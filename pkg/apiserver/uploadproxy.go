package apiserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/nativevirt/nativevirt/pkg/uploadproxy"
	"github.com/nativevirt/nativevirt/pkg/uploadtoken"
)

// installUploadProxy serves CDI's upload proxy on addr over HTTPS with the API server's own
// serving certificate, from the start of the server to its end. Uploads are long: the proxy
// sets no timeouts on bodies (only on headers).
func installUploadProxy(s *genericapiserver.GenericAPIServer, addr string, cert dynamiccertificates.CertKeyContentProvider,
	key uploadtoken.Key, kube kubernetes.Interface) error {
	if cert == nil {
		return errors.New("the upload proxy needs the serving certificate")
	}
	p := &uploadproxy.Proxy{Key: key}
	if kube != nil {
		p.Resolve = uploadproxy.KubeResolver(kube)
	}
	tlsConfig := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			c, k := cert.CurrentCertKeyContent()
			pair, err := tls.X509KeyPair(c, k)
			if err != nil {
				return nil, err
			}
			return &pair, nil
		},
	}
	return s.AddPostStartHook("start-upload-proxy", func(hook genericapiserver.PostStartHookContext) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("upload proxy: %w", err)
		}
		srv := &http.Server{Handler: p, TLSConfig: tlsConfig, ReadHeaderTimeout: 30 * time.Second}
		go func() {
			<-hook.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		}()
		go func() {
			klog.InfoS("Serving the upload proxy", "address", ln.Addr().String())
			if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				klog.ErrorS(err, "The upload proxy stopped")
			}
		}()
		return nil
	})
}
