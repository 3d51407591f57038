package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	cdiv1beta1 "github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/importer/registrytest"
)

// The credentials of the test registry, and the Secret holding them in CDI's keys.
const (
	registryUser     = "e2e"
	registryPassword = "registry-secret"
	registrySecret   = "registry-creds"
)

// serveRegistry serves an in-process registry (plain http, basic auth) on the pods' bridge
// address, pushes the demo disk as a containerDisk image (demo:latest) and an image without a
// disk (nodisk:latest), and returns the registry's host:port.
func serveRegistry(t *testing.T, raw []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", podBridgeIP(t)+":0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := log.New(io.Discard, "", 0)
	srv := &http.Server{Handler: registrytest.BasicAuth(registry.New(registry.Logger(quiet)), registryUser, registryPassword),
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: quiet}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host := ln.Addr().String()
	demo, err := registrytest.ContainerDisk(raw)
	if err != nil {
		t.Fatal(err)
	}
	noDisk, err := registrytest.Image([]registrytest.File{{Name: "data/disk.img", Data: raw[:4096]}})
	if err != nil {
		t.Fatal(err)
	}
	for ref, img := range map[string]v1.Image{"demo:latest": demo, "nodisk:latest": noDisk} {
		if err := registrytest.Push(host+"/"+ref, img, nil, registryUser, registryPassword); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// allowInsecureRegistry lists host in the CDIConfig's spec.insecureRegistries (creating the
// CDIConfig when the controller has not yet) and restores the list when the test ends.
func allowInsecureRegistry(e *ctrlEnv, host string) {
	e.t.Helper()
	ctx := context.Background()
	configs := e.kv.CdiV1beta1().CDIConfigs()
	var before []string
	old, err := configs.Get(ctx, cdiv1beta1.CDIConfigName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = configs.Create(ctx, &cdiv1beta1.CDIConfig{ObjectMeta: metav1.ObjectMeta{Name: cdiv1beta1.CDIConfigName}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	case err == nil:
		before = old.Spec.InsecureRegistries
	}
	if err != nil {
		e.t.Fatalf("CDIConfig %s: %v", cdiv1beta1.CDIConfigName, err)
	}
	set := func(list []string) error {
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"insecureRegistries": list}})
		if err == nil {
			_, err = configs.Patch(context.Background(), cdiv1beta1.CDIConfigName, types.MergePatchType, patch, metav1.PatchOptions{})
		}
		return err
	}
	if err := set(append(slices.Clone(before), host)); err != nil {
		e.t.Fatalf("listing %s in CDIConfig spec.insecureRegistries: %v", host, err)
	}
	e.t.Cleanup(func() { _ = set(before) })
}

// registryCredentials creates the Secret of the test registry's credentials (CDI's keys).
func registryCredentials(e *ctrlEnv) {
	e.t.Helper()
	if _, err := e.kube.CoreV1().Secrets(e.ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: registrySecret},
		StringData: map[string]string{"accessKeyId": registryUser, "secretKey": registryPassword},
	}, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
