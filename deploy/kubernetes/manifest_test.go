// Package kubernetes holds the test of the Kubernetes manifests: each
// document is decoded strictly into the real Kubernetes API types (k8s.io/api,
// with the API server's case-sensitive strict JSON decoder, sigs.k8s.io/json),
// so a misspelt or misplaced field fails, and the Indexed
// Job is checked against what gab's sharding needs. No cluster is needed. The
// package has only tests, so gab's binary does not link the API types.
package kubernetes

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// strictDecode decodes one YAML document as the API server decodes JSON:
// case-sensitive field names, no unknown and no duplicated fields.
func strictDecode(doc []byte, obj any) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return errors.Join(strict...)
	}
	return nil
}

// decodeAll decodes a multi-document manifest strictly, by kind.
func decodeAll(t *testing.T, path string) (jobs []*batchv1.Job, claims []*corev1.PersistentVolumeClaim) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%s document %d: %v", path, i, err)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 Job":
			j := new(batchv1.Job)
			jobs, obj = append(jobs, j), j
		case "v1 PersistentVolumeClaim":
			c := new(corev1.PersistentVolumeClaim)
			claims, obj = append(claims, c), c
		default:
			t.Fatalf("%s document %d: unexpected %q %q", path, i, head.APIVersion, head.Kind)
		}
		if err := strictDecode([]byte(doc), obj); err != nil {
			t.Fatalf("%s document %d (%s): %v", path, i, head.Kind, err)
		}
	}
	return jobs, claims
}

// argAfter is the value following flag in args ("" if absent).
func argAfter(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

func envNamed(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func TestIndexedJob(t *testing.T) {
	jobs, claims := decodeAll(t, "gab-indexed-job.yaml")
	if len(jobs) != 1 || len(claims) != 1 {
		t.Fatalf("%d jobs, %d claims; want one of each", len(jobs), len(claims))
	}
	job, claim := jobs[0], claims[0]
	spec := &job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("not an Indexed Job")
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism || *spec.Completions < 2 {
		t.Errorf("completions %v, parallelism %v: want equal, at least 2", spec.Completions, spec.Parallelism)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Error("a failed shard must not run again later (backoffLimit 0)")
	}
	pod := &spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("restartPolicy %q, %d containers", pod.RestartPolicy, len(pod.Containers))
	}
	c := &pod.Containers[0]
	if c.Image != "gab:latest" {
		t.Errorf("image %q, want gab:latest (deploy/container's)", c.Image)
	}
	if argAfter(c.Args, "--shard") != "auto" {
		t.Errorf("args %q lack --shard auto", c.Args)
	}
	if want := strconv.Itoa(int(*spec.Completions)); argAfter(c.Args, "--shards") != want {
		t.Errorf("--shards %q, completions %s", argAfter(c.Args, "--shards"), want)
	}
	for flag, env := range map[string]string{"--run-id": "RUN_ID", "--start-at": "START_AT"} {
		if argAfter(c.Args, flag) != "$("+env+")" || envNamed(c, env) == nil {
			t.Errorf("%s should be $(%s) from the container's env", flag, env)
		}
	}
	if e := envNamed(c, "RUN_ID"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.labels['batch.kubernetes.io/controller-uid']" {
		t.Error("RUN_ID must be the Job's uid (the controller-uid label)")
	}
	if e := envNamed(c, "JOB_COMPLETION_INDEX"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Error("JOB_COMPLETION_INDEX must come from the completion index annotation")
	}
	json := argAfter(c.Args, "--json")
	if len(c.VolumeMounts) != 1 || !strings.HasPrefix(json, c.VolumeMounts[0].MountPath+"/") || !strings.Contains(json, "$(JOB_COMPLETION_INDEX)") {
		t.Errorf("--json %q must be a per-shard file in the mounted volume %+v", json, c.VolumeMounts)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].Name != c.VolumeMounts[0].Name || pod.Volumes[0].PersistentVolumeClaim == nil ||
		pod.Volumes[0].PersistentVolumeClaim.ClaimName != claim.Name {
		t.Errorf("the results volume must be the claim %q: %+v", claim.Name, pod.Volumes)
	}
	if !slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Error("pods on several nodes write the results: the claim must be ReadWriteMany")
	}
	if url := c.Args[len(c.Args)-1]; !strings.HasPrefix(url, "http") {
		t.Errorf("the last argument %q is not the URL", url)
	}
}

func TestMergeJob(t *testing.T) {
	jobs, claims := decodeAll(t, "gab-merge-job.yaml")
	shards, shardClaims := decodeAll(t, "gab-indexed-job.yaml")
	if len(jobs) != 1 || len(claims) != 0 {
		t.Fatalf("%d jobs, %d claims", len(jobs), len(claims))
	}
	c := &jobs[0].Spec.Template.Spec.Containers[0]
	sc := &shards[0].Spec.Template.Spec.Containers[0]
	if c.Image != sc.Image || len(c.Args) < 2 || c.Args[0] != "merge" || c.Args[1] != sc.VolumeMounts[0].MountPath {
		t.Errorf("merge job: image %q args %q; want %q merge %s", c.Image, c.Args, sc.Image, sc.VolumeMounts[0].MountPath)
	}
	v := jobs[0].Spec.Template.Spec.Volumes
	if len(v) != 1 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != shardClaims[0].Name {
		t.Errorf("merge job volumes %+v", v)
	}
}

// TestStrictDecodingCatchesMistakes: the decoder really rejects a wrong field.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	raw, err := os.ReadFile("gab-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(raw, []byte("completionMode: Indexed"), []byte("completionmode: Indexed"), 1)
	docs := regexp.MustCompile(`(?m)^---\s*$`).Split(string(bad), -1)
	if err := strictDecode([]byte(docs[1]), new(batchv1.Job)); err == nil {
		t.Fatal("a misspelt field decoded without error")
	}
}
