// Command nativevirt-importer fills a DataVolume's claim in an importer pod (pkg/importer), or
// serves a claim's image to the importer of a clone (--serve-clone). It runs unprivileged in the
// launcher image, which carries qemu-img.
//
// The outcome is the pod's termination message (/dev/termination-log): JSON with either the
// import's result or "permanentError". Permanent errors end the command successfully, so that
// the kubelet of a restartPolicy OnFailure pod does not retry them; other errors exit 1 and are
// retried with the kubelet's back-off.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nativevirt/nativevirt/pkg/importer"
)

// Message is the termination message.
type Message struct {
	// Result is the import's outcome when it succeeded.
	Result *importer.Result `json:"result,omitempty"`
	// PermanentError is why the import failed for good.
	PermanentError string `json:"permanentError,omitempty"`
	// Error is why this attempt failed (it is retried).
	Error string `json:"error,omitempty"`
}

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("nativevirt-importer", flag.ContinueOnError)
	var (
		hdrs         headers
		url          = fs.String("url", "", "import from this http(s) URL")
		file         = fs.String("file", "", "import from this file in the pod")
		blank        = fs.Bool("blank", false, "create a blank image")
		secretDir    = fs.String("secret-dir", "", "basic auth: a mounted Secret with accessKeyId and secretKey")
		headerDir    = fs.String("header-dir", "", "mounted Secrets whose values are extra headers (Name: value)")
		certDir      = fs.String("cert-dir", "", "a mounted ConfigMap of PEM certificates to trust")
		targetDir    = fs.String("target-dir", "", "the Filesystem claim's mount")
		targetDevice = fs.String("target-device", "", "the Block claim's device")
		scratchDir   = fs.String("scratch-dir", "", "room for converting a non-raw image to a Block claim")
		imageSize    = fs.Int64("image-size", 0, "the usable size of the image in bytes")
		progress     = fs.String("progress-listen", ":8090", "serve GET /progress here (empty: no)")
		serveClone   = fs.String("serve-clone", "", "serve this image to a clone's importer instead (token: $NATIVEVIRT_CLONE_TOKEN)")
		serveUpload  = fs.Bool("serve-upload", false, "receive the image from the upload proxy (token: $NATIVEVIRT_UPLOAD_TOKEN)")
		listen       = fs.String("listen", ":8443", "with --serve-clone or --serve-upload: the address to serve on")
		termLog      = fs.String("termination-log", "/dev/termination-log", "where the outcome goes")
	)
	fs.Var(&hdrs, "header", "an extra request header \"Name: value\" (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *serveClone != "" {
		return serve(ctx, *listen, &importer.CloneSource{Path: *serveClone, Token: os.Getenv("NATIVEVIRT_CLONE_TOKEN")})
	}
	o := importer.Options{File: *file, Blank: *blank, TargetDir: *targetDir, TargetDevice: *targetDevice,
		ScratchDir: *scratchDir, ImageSize: *imageSize, Progress: &importer.Progress{}}
	if *url != "" {
		h, err := httpSource(*url, hdrs, *secretDir, *headerDir, *certDir)
		if err != nil {
			return finish(*termLog, importer.Result{}, err)
		}
		// A clone's importer proves itself to the clone source with the clone's token.
		if token := os.Getenv("NATIVEVIRT_CLONE_TOKEN"); token != "" {
			h.Headers = append(h.Headers, "Authorization: Bearer "+token)
		}
		o.HTTP = h
	}
	if *progress != "" {
		mux := http.NewServeMux()
		mux.Handle("/progress", o.Progress)
		srv := &http.Server{Addr: *progress, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.ListenAndServe() }()
		defer func() { _ = srv.Close() }()
	}
	if *serveUpload {
		return serveUploads(ctx, *listen, *termLog, o)
	}
	res, err := importer.Run(ctx, o)
	return finish(*termLog, res, err)
}

// serveUploads receives uploads until one completes or fails for good (an interrupted one may
// be repeated), then ends with its outcome.
func serveUploads(ctx context.Context, listen, termLog string, o importer.Options) int {
	token := os.Getenv("NATIVEVIRT_UPLOAD_TOKEN")
	if token == "" {
		fmt.Fprintln(os.Stderr, "nativevirt-importer: --serve-upload needs $NATIVEVIRT_UPLOAD_TOKEN")
		return 2
	}
	up := &importer.UploadServer{Token: token, Import: func(ctx context.Context, r io.Reader, size int64) (importer.Result, error) {
		opts := o
		opts.Reader, opts.ReaderSize = r, size
		res, err := importer.Run(ctx, opts)
		if err != nil {
			fmt.Fprintf(os.Stderr, "nativevirt-importer: upload: %v\n", err)
		}
		return res, err
	}}
	srv := &http.Server{Addr: listen, Handler: up, ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	fmt.Printf("nativevirt-importer: waiting for an upload on %s\n", listen)
	select {
	case <-up.Done():
		// The handler answers before Done is closed; let its response go out.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		res, err := up.Outcome()
		return finish(termLog, res, err)
	case err := <-errs:
		fmt.Fprintf(os.Stderr, "nativevirt-importer: %v\n", err)
		return 1
	case <-ctx.Done():
		_ = srv.Close()
		return finish(termLog, importer.Result{}, ctx.Err())
	}
}

// httpSource reads the credentials, headers and certificates mounted into the pod.
func httpSource(url string, hdrs []string, secretDir, headerDir, certDir string) (*importer.HTTPSource, error) {
	h := &importer.HTTPSource{URL: url, Headers: hdrs}
	if secretDir != "" {
		user, err := os.ReadFile(filepath.Join(secretDir, "accessKeyId"))
		if err != nil {
			return nil, err
		}
		pass, err := os.ReadFile(filepath.Join(secretDir, "secretKey"))
		if err != nil {
			return nil, err
		}
		h.Username, h.Password = strings.TrimSpace(string(user)), strings.TrimSpace(string(pass))
	}
	if headerDir != "" {
		values, err := readDir(headerDir)
		if err != nil {
			return nil, err
		}
		for _, v := range values {
			h.Headers = append(h.Headers, strings.TrimSpace(string(v)))
		}
	}
	if certDir != "" {
		certs, err := readDir(certDir)
		if err != nil {
			return nil, err
		}
		for _, c := range certs {
			h.CACerts = append(append(h.CACerts, c...), '\n')
		}
	}
	return h, nil
}

// readDir reads the regular files of a mounted Secret or ConfigMap (skipping the kubelet's
// ..data links), recursing into the subdirectories a Secret's items may make.
func readDir(dir string) ([][]byte, error) {
	var out [][]byte
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "..") {
			if d.IsDir() && path != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	})
	return out, err
}

// finish writes the termination message and returns the exit code.
func finish(termLog string, res importer.Result, err error) int {
	msg := Message{}
	code := 0
	switch {
	case err == nil:
		msg.Result = &res
		mib := float64(res.SourceBytes) / (1 << 20)
		rate := 0.0
		if res.Seconds > 0 {
			rate = mib / res.Seconds
		}
		fmt.Printf("nativevirt-importer: imported %.1f MiB of %s%v in %.1fs (%.1f MiB/s), virtual size %d bytes\n",
			mib, res.Format, res.Compression, res.Seconds, rate, res.VirtualSize)
	case importer.IsPermanent(err):
		msg.PermanentError = err.Error()
		fmt.Fprintf(os.Stderr, "nativevirt-importer: failed for good: %v\n", err)
	default:
		msg.Error = err.Error()
		code = 1
		fmt.Fprintf(os.Stderr, "nativevirt-importer: %v\n", err)
	}
	// The kubelet keeps 4096 bytes of a termination message.
	msg.Error, msg.PermanentError = truncate(msg.Error), truncate(msg.PermanentError)
	b, jerr := json.Marshal(msg)
	if jerr == nil {
		if werr := os.WriteFile(termLog, b, 0o644); werr != nil && !errors.Is(werr, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "nativevirt-importer: writing %s: %v\n", termLog, werr)
		}
	}
	return code
}

// serve serves a clone source until ctx ends.
func serve(ctx context.Context, listen string, src *importer.CloneSource) int {
	if src.Token == "" {
		fmt.Fprintln(os.Stderr, "nativevirt-importer: --serve-clone needs $NATIVEVIRT_CLONE_TOKEN")
		return 2
	}
	if _, err := os.Stat(src.Path); err != nil {
		fmt.Fprintf(os.Stderr, "nativevirt-importer: the clone source: %v\n", err)
		return 1
	}
	srv := &http.Server{Addr: listen, Handler: src, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("nativevirt-importer: serving %s on %s\n", src.Path, listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "nativevirt-importer: %v\n", err)
		return 1
	}
	return 0
}

// truncate shortens a message to what fits in a termination message with its JSON.
func truncate(s string) string {
	const most = 3500
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}
