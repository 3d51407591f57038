package podindex

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestPodsOf(t *testing.T) {
	inf := informers.NewSharedInformerFactory(fake.NewSimpleClientset(), 0).Core().V1().Pods().Informer()
	for i := 0; i < 2; i++ { // a second controller sharing the informer is fine
		if err := Ensure(inf); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, uid string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		if uid != "" {
			p.Labels = map[string]string{"kubevirt.io/created-by": uid}
		}
		return p
	}
	for _, p := range []*corev1.Pod{pod("a", "u1"), pod("b", "u2"), pod("c", "u1"), pod("d", "")} {
		if err := inf.GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]int{"u1": 2, "u2": 1, "u3": 0}
	for uid, want := range tests {
		got, err := PodsOf(inf.GetIndexer(), uid)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("PodsOf(%s) = %d pods, want %d", uid, len(got), want)
		}
	}
}
