package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
)

func ptr[T any](v T) *T { return &v }

func storage(size string) *v1beta1.StorageSpec {
	s := &v1beta1.StorageSpec{}
	if size != "" {
		s.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return s
}

func pvc(size string, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaimSpec {
	s := &corev1.PersistentVolumeClaimSpec{AccessModes: modes}
	if size != "" {
		s.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
	}
	return s
}

func dv(spec v1beta1.DataVolumeSpec) *v1beta1.DataVolume {
	return &v1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "disk", Namespace: "ns"}, Spec: spec}
}

func httpSource(u string) *v1beta1.DataVolumeSource {
	return &v1beta1.DataVolumeSource{HTTP: &v1beta1.DataVolumeSourceHTTP{URL: u}}
}

// errorFields lists "field: type" of each error, in order.
func errorFields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+string(e.Type))
	}
	return out
}

func TestValidateDataVolume(t *testing.T) {
	cases := []struct {
		name     string
		spec     v1beta1.DataVolumeSpec
		want     []string
		contains string
	}{
		{name: "http into storage", spec: v1beta1.DataVolumeSpec{Source: httpSource("https://example.com/disk.qcow2"), Storage: storage("1Gi")}},
		{name: "http into a pvc", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://example.com/d.img"),
			PVC: pvc("1Gi", corev1.ReadWriteOnce)}},
		{name: "registry", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://quay.io/containerdisks/fedora:40"), PullMethod: ptr(v1beta1.RegistryPullNode)}}, Storage: storage("5Gi")}},
		{name: "blank", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Blank: &v1beta1.DataVolumeBlankImage{}}, Storage: storage("1Gi")}},
		{name: "upload", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Upload: &v1beta1.DataVolumeSourceUpload{}}, Storage: storage("1Gi")}},
		{name: "clone without a size", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: "golden", Name: "fedora"}}, Storage: storage("")}},
		{name: "sourceRef without a size", spec: v1beta1.DataVolumeSpec{SourceRef: &v1beta1.DataVolumeSourceRef{Kind: "DataSource", Name: "fedora", Namespace: ptr("golden")}, Storage: storage("")}},

		// Not built yet: refused with 422 naming the field.
		{name: "oci archive", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("oci-archive:///data/image.tar"), PullMethod: ptr(v1beta1.RegistryPullNode)}}, Storage: storage("5Gi")},
			want: []string{"spec.source.registry.url: FieldValueForbidden"}, contains: "not supported"},
		{name: "registry pull method pod by default", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://quay.io/containerdisks/fedora:40")}}, Storage: storage("5Gi")},
			want: []string{"spec.source.registry.pullMethod: FieldValueForbidden"}, contains: "pullMethod node"},
		{name: "registry credentials", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://quay.io/x"), PullMethod: ptr(v1beta1.RegistryPullNode), SecretRef: ptr("creds"), CertConfigMap: ptr("ca")}}, Storage: storage("5Gi")},
			want: []string{"spec.source.registry.secretRef: FieldValueForbidden", "spec.source.registry.certConfigMap: FieldValueForbidden"}},
		{name: "snapshot", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Snapshot: &v1beta1.DataVolumeSourceSnapshot{Namespace: "golden", Name: "s"}}, Storage: storage("")},
			want: []string{"spec.source.snapshot: FieldValueForbidden"}},
		{name: "externally populated", spec: v1beta1.DataVolumeSpec{Storage: &v1beta1.StorageSpec{
			Resources:     corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			DataSourceRef: &corev1.TypedObjectReference{APIGroup: ptr("example.com"), Kind: "Populator", Name: "p"}}},
			want: []string{"spec.storage.dataSourceRef: FieldValueForbidden"}},
		{name: "archive", spec: v1beta1.DataVolumeSpec{ContentType: v1beta1.DataVolumeArchive, Source: httpSource("http://x/y.tar"), Storage: storage("1Gi")},
			want: []string{"spec.contentType: FieldValueForbidden"}},
		{name: "preallocation", spec: v1beta1.DataVolumeSpec{Preallocation: ptr(true), Source: httpSource("http://x/y"), Storage: storage("1Gi")},
			want: []string{"spec.preallocation: FieldValueForbidden"}},
		{name: "no source", spec: v1beta1.DataVolumeSpec{Storage: storage("1Gi")}, want: []string{"spec.source: FieldValueRequired"},
			contains: "either Source or SourceRef"},
		{name: "source and sourceRef", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"),
			SourceRef: &v1beta1.DataVolumeSourceRef{Kind: "DataSource", Name: "d"}, Storage: storage("1Gi")},
			want: []string{"spec.sourceRef: FieldValueInvalid"}},
		{name: "empty source", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{}, Storage: storage("1Gi")},
			want: []string{"spec.source: FieldValueRequired"}},
		{name: "two source kinds", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{HTTP: &v1beta1.DataVolumeSourceHTTP{URL: "http://x/y"},
			Blank: &v1beta1.DataVolumeBlankImage{}}, Storage: storage("1Gi")}, want: []string{"spec.source: FieldValueInvalid"}, contains: "http, blank"},
		{name: "no claim", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y")}, want: []string{"spec.pvc: FieldValueRequired"}},
		{name: "pvc and storage", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), PVC: pvc("1Gi", corev1.ReadWriteOnce), Storage: storage("1Gi")},
			want: []string{"spec.storage: FieldValueInvalid"}},
		{name: "ftp url", spec: v1beta1.DataVolumeSpec{Source: httpSource("ftp://example.com/d"), Storage: storage("1Gi")},
			want: []string{"spec.source.http.url: FieldValueInvalid"}},
		{name: "relative url", spec: v1beta1.DataVolumeSpec{Source: httpSource("disk.img"), Storage: storage("1Gi")},
			want: []string{"spec.source.http.url: FieldValueInvalid"}},
		{name: "no url", spec: v1beta1.DataVolumeSpec{Source: httpSource(""), Storage: storage("1Gi")},
			want: []string{"spec.source.http.url: FieldValueRequired"}},
		{name: "bad extra header", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{HTTP: &v1beta1.DataVolumeSourceHTTP{
			URL: "http://x/y", ExtraHeaders: []string{"noColon"}}}, Storage: storage("1Gi")},
			want: []string{"spec.source.http.extraHeaders[0]: FieldValueInvalid"}},
		{name: "registry http url", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("https://quay.io/x")}}, Storage: storage("1Gi")}, want: []string{"spec.source.registry.url: FieldValueInvalid"}, contains: "docker://"},
		{name: "registry url and image stream", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://x"), ImageStream: ptr("s")}}, Storage: storage("1Gi")}, want: []string{"spec.source.registry.url: FieldValueInvalid"}},
		{name: "registry pull method", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://x"), PullMethod: ptr(v1beta1.RegistryPullMethod("daemon"))}}, Storage: storage("1Gi")},
			want: []string{"spec.source.registry.pullMethod: FieldValueNotSupported"}},
		{name: "registry archive", spec: v1beta1.DataVolumeSpec{ContentType: v1beta1.DataVolumeArchive, Source: &v1beta1.DataVolumeSource{Registry: &v1beta1.DataVolumeSourceRegistry{
			URL: ptr("docker://x")}}, Storage: storage("1Gi")}, want: []string{"spec.contentType: FieldValueForbidden", "spec.source.registry: FieldValueInvalid"}},
		{name: "content type", spec: v1beta1.DataVolumeSpec{ContentType: "iso", Source: httpSource("http://x/y"), Storage: storage("1Gi")},
			want: []string{"spec.contentType: FieldValueNotSupported"}},
		{name: "import without a size", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: storage("")},
			want: []string{"spec.storage.resources.requests.storage: FieldValueRequired"}},
		{name: "clone pvc without a size", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Namespace: "g", Name: "f"}},
			PVC: pvc("", corev1.ReadWriteOnce)}, want: []string{"spec.pvc.resources.requests.storage: FieldValueRequired"}},
		{name: "zero size", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: storage("0")},
			want: []string{"spec.storage.resources.requests.storage: FieldValueInvalid"}},
		{name: "negative size", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), PVC: pvc("-1Gi", corev1.ReadWriteOnce)},
			want: []string{"spec.pvc.resources.requests.storage: FieldValueInvalid"}},
		{name: "pvc without access modes", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), PVC: pvc("1Gi")},
			want: []string{"spec.pvc.accessModes: FieldValueRequired"}},
		{name: "bad access mode", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: &v1beta1.StorageSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteSometimes"},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}},
			want: []string{"spec.storage.accessModes[0]: FieldValueNotSupported"}},
		{name: "clone without a namespace", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{PVC: &v1beta1.DataVolumeSourcePVC{Name: "f"}}, Storage: storage("")},
			want: []string{"spec.source.pvc.namespace: FieldValueRequired"}},
		{name: "sourceRef kind", spec: v1beta1.DataVolumeSpec{SourceRef: &v1beta1.DataVolumeSourceRef{Kind: "PersistentVolumeClaim", Name: "x"}, Storage: storage("")},
			want: []string{"spec.sourceRef.kind: FieldValueNotSupported"}},
		{name: "blank archive", spec: v1beta1.DataVolumeSpec{ContentType: v1beta1.DataVolumeArchive, Source: &v1beta1.DataVolumeSource{Blank: &v1beta1.DataVolumeBlankImage{}}, Storage: storage("1Gi")},
			want: []string{"spec.contentType: FieldValueForbidden", "spec.source.blank: FieldValueInvalid"}},
		{name: "external population with a source", spec: v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), PVC: &corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			DataSource:  &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "x"}}},
			want: []string{"spec.source: FieldValueInvalid", "spec.pvc.dataSource: FieldValueForbidden"}},
		{name: "s3", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{S3: &v1beta1.DataVolumeSourceS3{URL: "s3://b/k"}}, Storage: storage("1Gi")},
			want: []string{"spec.source.s3: FieldValueForbidden"}, contains: "not supported"},
		{name: "gcs", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{GCS: &v1beta1.DataVolumeSourceGCS{URL: "gs://b/k"}}, Storage: storage("1Gi")},
			want: []string{"spec.source.gcs: FieldValueForbidden"}, contains: "not supported"},
		{name: "imageio", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{Imageio: &v1beta1.DataVolumeSourceImageIO{URL: "https://e", DiskID: "1"}}, Storage: storage("1Gi")},
			want: []string{"spec.source.imageio: FieldValueForbidden"}, contains: "not supported"},
		{name: "vddk", spec: v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{VDDK: &v1beta1.DataVolumeSourceVDDK{URL: "https://e"}}, Storage: storage("1Gi")},
			want: []string{"spec.source.vddk: FieldValueForbidden"}, contains: "not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := ValidateDataVolume(dv(c.spec))
			if diff := cmp.Diff(c.want, errorFields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if c.contains != "" && !strings.Contains(errs.ToAggregate().Error(), c.contains) {
				t.Errorf("errors %v do not say %q", errs, c.contains)
			}
		})
	}
}

func TestValidateDataVolumeName(t *testing.T) {
	d := dv(v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: storage("1Gi")})
	d.Name = "Not_A_Name"
	if diff := cmp.Diff([]string{"metadata.name: FieldValueInvalid"}, errorFields(ValidateDataVolume(d))); diff != "" {
		t.Error(diff)
	}
}

// TestValidateDataVolumeUpdate: the spec is immutable, as CDI's webhook has it; metadata may
// change; a multistage import may add checkpoints.
func TestValidateDataVolumeUpdate(t *testing.T) {
	old := dv(v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: storage("1Gi")})

	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"a": "b"}
	if errs := ValidateDataVolumeUpdate(labelled, old); len(errs) != 0 {
		t.Errorf("a label change was refused: %v", errs)
	}
	grown := old.DeepCopy()
	grown.Spec.Storage = storage("2Gi")
	errs := ValidateDataVolumeUpdate(grown, old)
	if diff := cmp.Diff([]string{"spec: FieldValueForbidden"}, errorFields(errs)); diff != "" || !strings.Contains(errs.ToAggregate().Error(), "Cannot update DataVolume Spec") {
		t.Errorf("spec change: %v %s", errs, diff)
	}
	// The same quantity written otherwise is no change.
	same := old.DeepCopy()
	same.Spec.Storage = storage("1024Mi")
	if errs := ValidateDataVolumeUpdate(same, old); len(errs) != 0 {
		t.Errorf("an equal spec was refused: %v", errs)
	}
	// Checkpoints of a multistage vddk import may change (vddk itself is refused on create, so
	// this only checks the immutability rule).
	ms := dv(v1beta1.DataVolumeSpec{Source: &v1beta1.DataVolumeSource{VDDK: &v1beta1.DataVolumeSourceVDDK{URL: "https://e"}}, Storage: storage("1Gi"),
		Checkpoints: []v1beta1.DataVolumeCheckpoint{{Current: "a"}}})
	ms2 := ms.DeepCopy()
	ms2.Spec.Checkpoints = append(ms2.Spec.Checkpoints, v1beta1.DataVolumeCheckpoint{Previous: "a", Current: "b"})
	ms2.Spec.FinalCheckpoint = true
	if !onlyCheckpointsChanged(&ms2.Spec, &ms.Spec) {
		t.Error("a checkpoint change of a multistage import was not recognised")
	}
}

func TestValidateDataVolumeStatusUpdate(t *testing.T) {
	old := dv(v1beta1.DataVolumeSpec{Source: httpSource("http://x/y"), Storage: storage("1Gi")})
	good := old.DeepCopy()
	good.Status = v1beta1.DataVolumeStatus{Phase: v1beta1.Succeeded, Progress: "100.0%", Conditions: []v1beta1.DataVolumeCondition{
		{Type: v1beta1.DataVolumeReady, Status: corev1.ConditionTrue}, {Type: v1beta1.DataVolumeBound, Status: corev1.ConditionTrue}}}
	if errs := ValidateDataVolumeStatusUpdate(good, old); len(errs) != 0 {
		t.Errorf("valid status refused: %v", errs)
	}
	bad := old.DeepCopy()
	bad.Status = v1beta1.DataVolumeStatus{RestartCount: -1, Conditions: []v1beta1.DataVolumeCondition{
		{Type: v1beta1.DataVolumeReady, Status: "Maybe"}, {Type: v1beta1.DataVolumeReady, Status: corev1.ConditionTrue}}}
	want := []string{"status.restartCount: FieldValueInvalid", "status.conditions[0].status: FieldValueNotSupported", "status.conditions[1].type: FieldValueDuplicate"}
	if diff := cmp.Diff(want, errorFields(ValidateDataVolumeStatusUpdate(bad, old))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
