package virtualmachine

import "sigs.k8s.io/structured-merge-diff/v6/fieldpath"

func fieldpathVersion(v string) fieldpath.APIVersion { return fieldpath.APIVersion(v) }

func mustPath(p string) fieldpath.Path { return fieldpath.MakePathOrDie(p) }
