package datavolume

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nativevirt/nativevirt/pkg/apis/cdi/v1beta1"
	"github.com/nativevirt/nativevirt/pkg/importer"
)

// Paths inside the importer pods.
const (
	importerBinary = "/usr/bin/nativevirt-importer"
	copyDiskBinary = "/usr/bin/nativevirt-copy-disk"
	targetDir      = "/data"
	targetDevice   = "/dev/nativevirt-target"
	sourceDir      = "/source"
	sourceDevice   = "/dev/nativevirt-source"
	scratchDir     = "/scratch"
	binDir         = "/var/run/nativevirt-bin"
	secretDir      = "/var/run/nativevirt-importer/secret"
	certDir        = "/var/run/nativevirt-importer/certs"
	headerDir      = "/var/run/nativevirt-importer/headers"
	// registryFile is where a registry image's disk is copied to before its import.
	registryFile = scratchDir + "/registry-disk.img"
	// ProgressPort serves the importer's GET /progress.
	ProgressPort = 8090
	// ClonePort serves a clone source.
	ClonePort = 8443
	// cloneTokenEnv carries a clone's token to both of its pods.
	cloneTokenEnv = "NATIVEVIRT_CLONE_TOKEN"
	// UploadPort, UploadTokenEnv and UploadPodPrefix are the upload server pod's (shared with
	// the upload proxy).
	UploadPort      = importer.UploadPort
	UploadTokenEnv  = importer.UploadTokenEnv
	UploadPodPrefix = importer.UploadPodPrefix
)

// Config is what the controller needs to render its pods.
type Config struct {
	// Image runs the importer (the launcher image: it has qemu-img and nativevirt-importer).
	Image string
	// PullPolicy of Image.
	PullPolicy corev1.PullPolicy
}

// population says what fills a claim.
type population struct {
	http *v1beta1.DataVolumeSourceHTTP
	// registryImage is the image (without docker://) whose /disk is imported.
	registryImage string
	blank         bool
	// upload: an upload server pod receives the image (uploadToken is what the proxy presents).
	upload      bool
	uploadToken string
	// cloneURL and cloneToken reach a clone's source pod.
	cloneURL, cloneToken string
}

// isClone says whether the population is a clone.
func (p population) isClone() bool { return p.cloneURL != "" }

// importerPodName is the name of the pod filling the claim of a DataVolume (CDI's): an
// importer, or the upload server of an upload.
func importerPodName(dv *v1beta1.DataVolume) string {
	if isUpload(dv) {
		return UploadPodPrefix + dv.Name
	}
	return "importer-" + dv.Name
}

// isUpload says whether dv is filled by an upload (virtctl image-upload).
func isUpload(dv *v1beta1.DataVolume) bool {
	return dv.Spec.Source != nil && dv.Spec.Source.Upload != nil
}

// cloneSourcePodName is the name of the pod serving a clone's source, in the source's namespace.
func cloneSourcePodName(dv *v1beta1.DataVolume) string { return "clone-source-" + string(dv.UID) }

// importerPod renders the pod that fills the claim of dv, on node when node is set.
func importerPod(dv *v1beta1.DataVolume, plan claimPlan, pop population, cfg Config, node string) *corev1.Pod {
	args := []string{fmt.Sprintf("--progress-listen=:%d", ProgressPort)}
	c := corev1.Container{
		Name: "importer", Image: cfg.Image, ImagePullPolicy: cfg.PullPolicy,
		Ports:                    []corev1.ContainerPort{{Name: "progress", ContainerPort: ProgressPort}},
		SecurityContext:          restricted(),
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	var volumes []corev1.Volume
	volumes = append(volumes, corev1.Volume{Name: "target", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: plan.claim.Name}}})
	if plan.block {
		c.VolumeDevices = append(c.VolumeDevices, corev1.VolumeDevice{Name: "target", DevicePath: targetDevice})
		args = append(args, "--target-device="+targetDevice, "--scratch-dir="+scratchDir)
	} else {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "target", MountPath: targetDir})
		args = append(args, "--target-dir="+targetDir, "--image-size="+strconv.FormatInt(plan.imageSize, 10))
	}
	needScratch := plan.block || pop.registryImage != ""
	if needScratch {
		volumes = append(volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "scratch", MountPath: scratchDir})
	}
	var inits []corev1.Container
	switch {
	case pop.blank:
		args = append(args, "--blank")
	case pop.upload:
		args = append(args, "--serve-upload", fmt.Sprintf("--listen=:%d", UploadPort))
		c.Env = append(c.Env, corev1.EnvVar{Name: UploadTokenEnv, Value: pop.uploadToken})
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: "upload", ContainerPort: UploadPort})
		// Ready (UploadReady) once it listens.
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
			Port: intstrPort(UploadPort)}}, PeriodSeconds: 1}
	case pop.isClone():
		args = append(args, "--url="+pop.cloneURL)
		c.Env = append(c.Env, corev1.EnvVar{Name: cloneTokenEnv, Value: pop.cloneToken})
	case pop.registryImage != "":
		args = append(args, "--file="+registryFile)
		volumes = append(volumes, corev1.Volume{Name: "bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		inits = registryInits(pop.registryImage, cfg)
	case pop.http != nil:
		h := pop.http
		args = append(args, "--url="+h.URL)
		for _, hdr := range h.ExtraHeaders {
			args = append(args, "--header="+hdr)
		}
		if h.SecretRef != "" {
			volumes = append(volumes, corev1.Volume{Name: "secret", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: h.SecretRef}}})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "secret", MountPath: secretDir, ReadOnly: true})
			args = append(args, "--secret-dir="+secretDir)
		}
		if h.CertConfigMap != "" {
			volumes = append(volumes, corev1.Volume{Name: "certs", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: h.CertConfigMap}}}})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "certs", MountPath: certDir, ReadOnly: true})
			args = append(args, "--cert-dir="+certDir)
		}
		for i, s := range h.SecretExtraHeaders {
			name := fmt.Sprintf("header-%d", i)
			volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: s}}})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: headerDir + "/" + name, ReadOnly: true})
		}
		if len(h.SecretExtraHeaders) > 0 {
			args = append(args, "--header-dir="+headerDir)
		}
	}
	c.Command = append([]string{importerBinary}, args...)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: importerPodName(dv), Namespace: dv.Namespace,
			Labels:          map[string]string{LabelApp: AppImporter, LabelDataVolume: dv.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dv, v1beta1.SchemeGroupVersion.WithKind("DataVolume"))},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:     corev1.RestartPolicyOnFailure,
			InitContainers:    inits,
			Containers:        []corev1.Container{c},
			Volumes:           volumes,
			PriorityClassName: dv.Spec.PriorityClassName,
			// The importer needs no API access.
			AutomountServiceAccountToken: ptr(false),
			SecurityContext:              &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		},
	}
	pinToNode(&pod.Spec, node)
	return pod
}

// registryInits copy the disk out of a registry image as the node's runtime has it (KubeVirt's
// containerDisk layout: the first file under /disk): the launcher image installs the static
// copy-disk binary into a shared emptyDir, and the disk image runs it.
func registryInits(image string, cfg Config) []corev1.Container {
	sc := restricted()
	// Disks in containerDisk images are often owned by 107 and not world-readable.
	sc.Capabilities.Add = []corev1.Capability{"DAC_OVERRIDE"}
	return []corev1.Container{
		{
			Name: "install-copier", Image: cfg.Image, ImagePullPolicy: cfg.PullPolicy,
			Command:         []string{copyDiskBinary, "--install", binDir + "/nativevirt-copy-disk"},
			VolumeMounts:    []corev1.VolumeMount{{Name: "bin", MountPath: binDir}},
			SecurityContext: restricted(),
		},
		{
			Name: "copy-disk", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{binDir + "/nativevirt-copy-disk", "--source", "/disk", "--dest", registryFile},
			VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: binDir, ReadOnly: true},
				{Name: "scratch", MountPath: scratchDir}},
			SecurityContext: sc,
		},
	}
}

// cloneSourcePod renders the pod serving the source claim of a clone in its namespace.
func cloneSourcePod(dv *v1beta1.DataVolume, source *corev1.PersistentVolumeClaim, token string, cfg Config) *corev1.Pod {
	block := source.Spec.VolumeMode != nil && *source.Spec.VolumeMode == corev1.PersistentVolumeBlock
	c := corev1.Container{
		Name: "clone-source", Image: cfg.Image, ImagePullPolicy: cfg.PullPolicy,
		Env:             []corev1.EnvVar{{Name: cloneTokenEnv, Value: token}},
		Ports:           []corev1.ContainerPort{{Name: "clone", ContainerPort: ClonePort}},
		SecurityContext: restricted(),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
			Port: intstrPort(ClonePort)}}, PeriodSeconds: 1},
	}
	path := sourceDir + "/" + importer.DiskImage
	if block {
		path = sourceDevice
		c.VolumeDevices = []corev1.VolumeDevice{{Name: "source", DevicePath: sourceDevice}}
	} else {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "source", MountPath: sourceDir, ReadOnly: true}}
	}
	c.Command = []string{importerBinary, "--serve-clone=" + path, fmt.Sprintf("--listen=:%d", ClonePort)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: cloneSourcePodName(dv), Namespace: source.Namespace,
			Labels: map[string]string{LabelApp: AppImporter, LabelCloneTarget: string(dv.UID)},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Containers:    []corev1.Container{c},
			Volumes: []corev1.Volume{{Name: "source", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: source.Name, ReadOnly: true}}}},
			AutomountServiceAccountToken: ptr(false),
			SecurityContext:              &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		},
	}
	if source.Namespace == dv.Namespace {
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(dv, v1beta1.SchemeGroupVersion.WithKind("DataVolume"))}
	}
	return pod
}

// cloneURL is where the importer of a clone fetches the source from.
func cloneURL(source *corev1.Pod) string {
	ip := source.Status.PodIP
	if strings.Contains(ip, ":") {
		ip = "[" + ip + "]"
	}
	return fmt.Sprintf("http://%s:%d%s", ip, ClonePort, importer.CloneSourcePath)
}

// pinToNode requires the pod to run on node (the node a WaitForFirstConsumer claim is
// provisioned on, where its consumer runs).
func pinToNode(spec *corev1.PodSpec, node string) {
	if node == "" {
		return
	}
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// restricted is the security context of the importer's containers: unprivileged, no added
// capabilities (Pod Security restricted, except that it may run as the image's user).
func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		Privileged:               ptr(false),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// registryImage turns a registry URL into an image reference: docker://REF → REF.
func registryImage(url string) string {
	return strings.TrimPrefix(url, v1beta1.RegistrySchemeDocker+"://")
}

func intstrPort(p int32) intstr.IntOrString { return intstr.FromInt32(p) }
