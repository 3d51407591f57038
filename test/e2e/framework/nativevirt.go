/*
Copyright The NativeVirt Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package framework

import (
	"context"
	"sync"
)

// deployScript deploys NativeVirt into the local cluster; `make run` uses the same script.
const deployScript = "hack/deploy-local.sh"

// deployment remembers the one deployment of a test binary: every test that needs NativeVirt
// shares it, and the first caller pays for it. One cluster per machine, hence one per process.
var deployment struct {
	once sync.Once
	err  error
}

// DeployNativeVirt deploys NativeVirt from artifacts/local (artifacts/local/ha when HA) with
// hack/deploy-local.sh (build,
// image, serving certificate, manifests) and returns once the APIServices v1.kubevirt.io,
// v1alpha3.kubevirt.io, v1.subresources.kubevirt.io and v1beta1.instancetype.kubevirt.io are
// Available and the kubevirt.io roles are aggregated into view/edit/admin (the script waits). It runs the script once per test binary; later calls
// return the first call's result, so a failed deployment fails every test that needs it with the
// same error instead of retrying a slow build.
func (c *Cluster) DeployNativeVirt(ctx context.Context) error {
	deployment.once.Do(func() {
		deployment.err = c.Run(ctx, deployScript)
	})
	return deployment.err
}
