package kube

// The objects of the Kubernetes API that gtrace reads, as their JSON
// encodes them, with only the fields gtrace uses. They are gtrace's own
// rather than k8s.io/api's: those types, with their protobuf and
// deep-copy code and apimachinery's package initialization, would make
// every gtrace run larger (docs/performance.md). The tests check them
// against a real API server, and the manifests against k8s.io/api.

// ObjectMeta is the metadata of an object.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	UID         string            `json:"uid,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Node is a node of the cluster.
type Node struct {
	Metadata ObjectMeta `json:"metadata"`
	Status   NodeStatus `json:"status"`
}

// NodeStatus is what the node's kubelet reports.
type NodeStatus struct {
	Addresses []NodeAddress `json:"addresses,omitempty"`
	NodeInfo  NodeInfo      `json:"nodeInfo"`
}

// NodeAddress is an address of a node: Type is InternalIP, ExternalIP,
// Hostname, ...
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// NodeInfo describes the node's system.
type NodeInfo struct {
	KernelVersion           string `json:"kernelVersion,omitempty"`
	OSImage                 string `json:"osImage,omitempty"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion,omitempty"`
	Architecture            string `json:"architecture,omitempty"`
}

// NodeList is the answer of a node list.
type NodeList struct {
	Items []Node `json:"items"`
}

// Pod is a pod.
type Pod struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     PodSpec    `json:"spec"`
	Status   PodStatus  `json:"status"`
}

// PodSpec is what the pod should run, and where.
type PodSpec struct {
	NodeName   string      `json:"nodeName,omitempty"`
	Containers []Container `json:"containers,omitempty"`
}

// Container is a container of a pod's spec.
type Container struct {
	Name  string          `json:"name"`
	Image string          `json:"image,omitempty"`
	Ports []ContainerPort `json:"ports,omitempty"`
}

// ContainerPort is a port a container listens on.
type ContainerPort struct {
	Name          string `json:"name,omitempty"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
}

// PodStatus is what the pod's kubelet reports.
type PodStatus struct {
	// Phase is Pending, Running, Succeeded, Failed or Unknown.
	Phase             string            `json:"phase,omitempty"`
	PodIP             string            `json:"podIP,omitempty"`
	Conditions        []PodCondition    `json:"conditions,omitempty"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
}

// PodCondition is a condition of a pod, such as Ready, with Status
// True, False or Unknown.
type PodCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// ContainerStatus is the state of a container of a pod.
type ContainerStatus struct {
	Name string `json:"name"`
	// ContainerID is RUNTIME://ID, such as containerd://0123abcd...
	ContainerID string `json:"containerID,omitempty"`
	Ready       bool   `json:"ready"`
}

// PodList is the answer of a pod list.
type PodList struct {
	Items []Pod `json:"items"`
}

// UserInfo is a user as the API server authenticated it.
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// TokenReviewStatus is the answer of a TokenReview.
type TokenReviewStatus struct {
	Authenticated bool     `json:"authenticated,omitempty"`
	User          UserInfo `json:"user"`
	Audiences     []string `json:"audiences,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// ResourceAttributes is an action on a resource, as a SubjectAccessReview
// asks about it.
type ResourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// AccessReviewSpec asks whether the user may do ResourceAttributes.
type AccessReviewSpec struct {
	ResourceAttributes *ResourceAttributes `json:"resourceAttributes,omitempty"`
	User               string              `json:"user,omitempty"`
	UID                string              `json:"uid,omitempty"`
	Groups             []string            `json:"groups,omitempty"`
	Extra              map[string][]string `json:"extra,omitempty"`
}

// AccessReviewStatus is the answer of a SubjectAccessReview.
type AccessReviewStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied,omitempty"`
	Reason          string `json:"reason,omitempty"`
	EvaluationError string `json:"evaluationError,omitempty"`
}

// status is the Status object of an error answer.
type status struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}
