package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	uploadv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/upload/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/client/clientset/versioned"
)

// The upload proxy's paths virtctl uses: the asynchronous one when a HEAD says it exists.
const (
	uploadPathAsync = "/v1beta1/upload-async"
	uploadPathSync  = "/v1beta1/upload"
)

// uploadOptions are the flags of `image-upload`, virtctl's names.
type uploadOptions struct {
	size, storageClass, accessMode, volumeMode string
	imagePath, proxyURL                        string
	insecure, noCreate, blockVolume, forceBind bool
	waitSecs                                   uint
	poll                                       time.Duration
}

func newImageUploadCommand(o *options) *cobra.Command {
	u := &uploadOptions{poll: 2 * time.Second}
	cmd := &cobra.Command{
		Use:   "image-upload dv NAME --image-path=PATH [--size=SIZE]",
		Short: "Upload a local disk image into a DataVolume (through CDI's upload proxy)",
		Long: "image-upload creates a DataVolume with spec.source.upload (unless it exists or --no-create is given), " +
			"waits until its upload server is ready, asks for an upload token (UploadTokenRequest) and sends the " +
			"image to the upload proxy, whose URL is --uploadproxy-url, else CDIConfig config's " +
			"spec.uploadProxyURLOverride, else its status.uploadProxyURL. Then it waits for the DataVolume to be " +
			"Succeeded. Images may be raw, qcow2 (or another format qemu-img reads) or iso, compressed with gz or xz. " +
			"As virtctl image-upload.",
		Example: "  nativevirt image-upload dv fedora --size=10Gi --image-path=fedora.qcow2 --insecure",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch strings.ToLower(args[0]) {
			case "dv", "datavolume":
			case "pvc":
				return errors.New("uploading into a bare PVC is not supported: use `image-upload dv NAME`")
			default:
				return fmt.Errorf("invalid resource type %s: use dv", args[0])
			}
			return u.run(cmd.Context(), o, args[1])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&u.size, "size", "", "The size of the DataVolume to create (ex. 10Gi, 500Mi).")
	fs.StringVar(&u.imagePath, "image-path", "", "Path to the local VM image.")
	fs.StringVar(&u.proxyURL, "uploadproxy-url", "", "The URL of the upload proxy.")
	fs.BoolVar(&u.insecure, "insecure", false, "Allow insecure server connections when using HTTPS.")
	fs.StringVar(&u.storageClass, "storage-class", "", "The storage class of the claim.")
	fs.StringVar(&u.accessMode, "access-mode", "", "The access mode of the claim (default: the StorageProfile's).")
	fs.StringVar(&u.volumeMode, "volume-mode", "", "The volume mode of the claim: block or filesystem (default: the StorageProfile's).")
	fs.BoolVar(&u.blockVolume, "block-volume", false, "Create a Block claim (as --volume-mode=block).")
	fs.BoolVar(&u.noCreate, "no-create", false, "Don't create the DataVolume: upload into an existing one.")
	fs.BoolVar(&u.forceBind, "force-bind", false, "Bind the claim at once, ignoring WaitForFirstConsumer.")
	fs.UintVar(&u.waitSecs, "wait-secs", 300, "Seconds to wait for the upload server to be ready.")
	_ = cmd.MarkFlagRequired("image-path")
	return cmd
}

func (u *uploadOptions) run(ctx context.Context, o *options, name string) error {
	out := o.streams.Out
	f, err := os.Open(u.imagePath)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	cfg, ns, err := o.restConfig()
	if err != nil {
		return err
	}
	kv, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dvs := kv.CdiV1beta1().DataVolumes(ns)
	dv, err := dvs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && !u.noCreate:
		if dv, err = u.dataVolume(name); err != nil {
			return err
		}
		if _, err = dvs.Create(ctx, dv, metav1.CreateOptions{}); err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "DataVolume %s/%s created\n", ns, name)
	case err != nil:
		return err
	case dv.Spec.Source == nil || dv.Spec.Source.Upload == nil:
		return fmt.Errorf("DataVolume %s/%s does not take uploads (its spec.source is not upload)", ns, name)
	case dv.Status.Phase == cdiv1beta1.Succeeded:
		return fmt.Errorf("DataVolume %s/%s has been populated already", ns, name)
	default:
		_, _ = fmt.Fprintf(out, "Using existing DataVolume %s/%s\n", ns, name)
	}
	if err := u.waitPhase(ctx, kv, ns, name, cdiv1beta1.UploadReady, time.Duration(u.waitSecs)*time.Second, out); err != nil {
		return err
	}
	proxy, err := u.uploadProxyURL(ctx, kv)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "Uploading data to %s\n", proxy)
	tr, err := kv.UploadV1beta1().UploadTokenRequests(ns).Create(ctx, &uploadv1beta1.UploadTokenRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "token-for-nativevirt"},
		Spec:       uploadv1beta1.UploadTokenRequestSpec{PvcName: name},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("upload token: %w", err)
	}
	if err := u.upload(ctx, proxy, tr.Status.Token, f); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(out, "Uploading data completed successfully, waiting for processing to complete")
	if err := u.waitPhase(ctx, kv, ns, name, cdiv1beta1.Succeeded, 0, out); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "Uploading %s completed successfully\n", u.imagePath)
	return nil
}

// dataVolume is the DataVolume to create (virtctl's: spec.storage with the size).
func (u *uploadOptions) dataVolume(name string) (*cdiv1beta1.DataVolume, error) {
	if u.size == "" {
		return nil, errors.New("when creating a DataVolume, the size must be specified (--size)")
	}
	q, err := resource.ParseQuantity(u.size)
	if err != nil {
		return nil, fmt.Errorf("validation failed for size=%s: %w", u.size, err)
	}
	st := &cdiv1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}}
	if u.storageClass != "" {
		st.StorageClassName = &u.storageClass
	}
	if u.accessMode != "" {
		if u.accessMode == string(corev1.ReadOnlyMany) {
			return nil, errors.New("cannot upload to a readonly volume, use either ReadWriteOnce or ReadWriteMany if supported")
		}
		st.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.PersistentVolumeAccessMode(u.accessMode)}
	}
	switch mode := strings.ToLower(u.volumeMode); {
	case u.blockVolume || mode == "block":
		m := corev1.PersistentVolumeBlock
		st.VolumeMode = &m
	case mode == "filesystem":
		m := corev1.PersistentVolumeFilesystem
		st.VolumeMode = &m
	case mode != "":
		return nil, fmt.Errorf("invalid --volume-mode %q: block or filesystem", u.volumeMode)
	}
	dv := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cdiv1beta1.DataVolumeSpec{
		Source: &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}}, Storage: st}}
	if u.forceBind {
		dv.Annotations = map[string]string{"cdi.kubevirt.io/storage.bind.immediate.requested": "true"}
	}
	return dv, nil
}

// waitPhase waits for the DataVolume's phase (timeout 0: no limit); Failed ends it.
func (u *uploadOptions) waitPhase(ctx context.Context, kv versioned.Interface, ns, name string, phase cdiv1beta1.DataVolumePhase,
	timeout time.Duration, out io.Writer) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	logged := false
	for {
		dv, err := kv.CdiV1beta1().DataVolumes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if dv != nil {
			switch dv.Status.Phase {
			case phase:
				if logged {
					_, _ = fmt.Fprintln(out, "Pod now ready")
				}
				return nil
			case cdiv1beta1.Failed:
				msg := ""
				for _, c := range dv.Status.Conditions {
					if c.Type == cdiv1beta1.DataVolumeRunning {
						msg = c.Message
					}
				}
				return fmt.Errorf("DataVolume %s/%s failed: %s", ns, name, msg)
			case cdiv1beta1.WaitForFirstConsumer:
				return fmt.Errorf("cannot upload to DataVolume in WaitForFirstConsumer state, make sure the PVC is Bound")
			}
		}
		if !logged && phase == cdiv1beta1.UploadReady {
			_, _ = fmt.Fprintf(out, "Waiting for PVC %s upload pod to be ready...\n", name)
			logged = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for DataVolume %s/%s to be %s: %w", ns, name, phase, ctx.Err())
		case <-time.After(u.poll):
		}
	}
}

// uploadProxyURL is --uploadproxy-url, else CDIConfig config's override, else its status
// (https:// added when the URL has no scheme).
func (u *uploadOptions) uploadProxyURL(ctx context.Context, kv versioned.Interface) (string, error) {
	proxy := u.proxyURL
	if proxy == "" {
		cfg, err := kv.CdiV1beta1().CDIConfigs().Get(ctx, "config", metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("the upload proxy's URL (CDIConfig config): %w", err)
		}
		switch {
		case cfg.Spec.UploadProxyURLOverride != nil:
			proxy = *cfg.Spec.UploadProxyURLOverride
		case cfg.Status.UploadProxyURL != nil:
			proxy = *cfg.Status.UploadProxyURL
		}
	}
	if proxy == "" {
		return "", errors.New("uploadproxy URL not found")
	}
	if !strings.Contains(proxy, "://") {
		proxy = "https://" + proxy
	}
	return proxy, nil
}

// upload sends the image: to the asynchronous path when a HEAD of it answers 200, else to the
// synchronous one.
func (u *uploadOptions) upload(ctx context.Context, proxy, token string, f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	client := &http.Client{}
	if u.insecure {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // --insecure asks for it
	}
	target, err := uploadURL(proxy, uploadPathAsync)
	if err != nil {
		return err
	}
	head, _ := http.NewRequestWithContext(ctx, http.MethodHead, target, nil)
	head.Header.Set("Authorization", "Bearer "+token)
	if resp, err := client.Do(head); err != nil || resp.StatusCode != http.StatusOK {
		if target, err = uploadURL(proxy, uploadPathSync); err != nil {
			return err
		}
	} else {
		_ = resp.Body.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, io.NopCloser(f))
	if err != nil {
		return err
	}
	req.ContentLength = st.Size()
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("unexpected return value %d, %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// uploadURL joins the proxy's URL and an upload path (kept when the URL has it already).
func uploadURL(proxy, p string) (string, error) {
	u, err := url.Parse(proxy)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(u.Path, p) {
		u.Path = path.Join("/", u.Path, p)
	}
	return u.String(), nil
}
