//! Which texts are templates (Go/Helm, Jinja, Terraform, printf) and where their markers are.

use crate::yaml::compat::*;

#[test]
fn template_lines_are_recognised() {
    let src =
        "apiVersion: apps/v1\nkind: Deployment\n{{- if .Values.gpu }}\nspec: {}\n{{- end }}\n";
    let h = template_markers(src).unwrap();
    assert_eq!(h.kind, "Go template");
    assert_eq!(h.marker, "{{- if .Values.gpu }}");
    assert_eq!(
        (h.span.start_pos(src).line, h.span.start_pos(src).col),
        (3, 1)
    );
    assert_eq!(&src[h.span.range()], h.marker);
}

#[test]
fn template_unquoted_values_are_recognised() {
    let src = "spec:\n  image: {{ .Values.image }}\n";
    let h = template_markers(src).unwrap();
    assert_eq!(
        (h.span.start_pos(src).line, h.span.start_pos(src).col),
        (2, 10)
    );
    let src = "metadata:\n  labels:\n    {{- include \"x.labels\" . | nindent 4 }}\n";
    let h = template_markers(src).unwrap();
    assert_eq!(h.span.start_pos(src).line, 3);
    let h = template_markers("spec:\n  - {{ toYaml .Values.extra }}\n").unwrap();
    assert_eq!(h.marker, "{{ toYaml .Values.extra }}");
}

#[test]
fn jinja_templates_are_recognised() {
    let src = "kind: Pod\n{% if gpu %}\nspec: {}\n{% endif %}\n";
    let h = template_markers(src).unwrap();
    assert_eq!(h.kind, "Jinja template");
    assert_eq!(
        (h.span.start_pos(src).line, h.marker.as_str()),
        (2, "{% if gpu %}")
    );
    let h = template_markers("a: 1 {# note #}\n").unwrap();
    assert_eq!(h.kind, "Jinja template");
}

#[test]
fn helm_expressions_count_even_quoted() {
    let src = "a: \"{{ .Values.x }}\"\nb: [\n";
    let h = template_markers(src).unwrap();
    assert_eq!(
        (h.span.start_pos(src).line, h.span.start_pos(src).col),
        (1, 5)
    );
}

#[test]
fn not_templates() {
    // Plain broken YAML, Argo-style parameters, comments and block scalars mentioning braces.
    assert_eq!(template_markers("a: [1, 2\nb: 3\n"), None);
    assert_eq!(
        template_markers("args: [\"{{inputs.parameters.x}}\"]\nname: step-{{item}}\n"),
        None
    );
    assert_eq!(
        template_markers("# {{- if .Values.x }}\na: 1 # {{ .Values.y }}\n"),
        None
    );
    assert_eq!(
        template_markers("alert: |\n  {{ $labels.instance }} is down\n  {{- end }}\nb: [\n"),
        None
    );
    assert_eq!(template_markers("a: \"{{ x }}\"\n"), None);
}

#[test]
fn template_after_a_block_scalar_is_found() {
    let src = "data:\n  run.sh: |\n    echo {{ .Values.x }}\n{{- end }}\n";
    let h = template_markers(src).unwrap();
    assert_eq!(h.span.start_pos(src).line, 4);
}

#[test]
fn terraform_printf_and_parsed_templates_are_recognised() {
    let h =
        template_markers("data:\n%{ if enable_ipv6 ~}\n  ipv6: \"true\"\n%{ endif ~}\n").unwrap();
    assert_eq!(
        (h.kind, h.marker.as_str()),
        ("Terraform template", "%{ if enable_ipv6 ~}")
    );
    let h = template_markers("config: ${indent(4, var.extra)}\n").unwrap();
    assert_eq!(h.kind, "Terraform template");
    let h = template_markers("ipv6: ${enable_ipv6 ? \"on\" : \"off\"}\n").unwrap();
    assert_eq!(h.kind, "Terraform template");
    let h = template_markers("spec:\n  cluster:\n    name: %s\n").unwrap();
    assert_eq!((h.kind, h.marker.as_str()), ("printf template", "%s"));
    // envsubst names and shell expansions stay values (placeholders), not templates.
    assert_eq!(
        template_markers("image: ${IMAGE}\nargs: [\"--rate=50%\"]\n"),
        None
    );
    assert_eq!(template_markers("ratio: 50%\ncmd: echo %s done\n"), None);
    assert_eq!(
        template_markers("args: curl -w %{http_code} http://x\n"),
        None
    );
    // Jinja/mustache variables and format fields a program fills in.
    let h = template_markers("metadata:\n  name: {{ graph_name }}\n").unwrap();
    assert_eq!(
        (h.kind, h.marker.as_str()),
        ("Jinja template", "{{ graph_name }}")
    );
    let h = template_markers("spec:\n  image: {username}/torchserve:latest\n").unwrap();
    assert_eq!(
        (h.kind, h.marker.as_str()),
        ("format template", "{username}")
    );
    assert_eq!(
        template_markers("labels: {app: x}\nargs: [a, {b: c}]\n"),
        None
    );
    // A file that parses: unquoted actions make it a template, quoted ones are values.
    let h = structural_template_markers("spec:\n  replicas: {{.Replicas}}\n").unwrap();
    assert_eq!(h.marker, "{{.Replicas}}");
    assert_eq!(
        structural_template_markers("metadata:\n  name: \"{{ .Values.name }}\"\n"),
        None
    );
}

#[test]
fn actions_inside_a_plain_scalar_of_a_parsed_file_are_text() {
    // A Prometheus alert's annotation: text its own templating fills in, not a Helm action.
    let alert = "spec:\n  groups:\n    - rules:\n        - annotations:\n            description: A total of {{ $value }} GPUs are down\n";
    assert!(structural_template_markers(alert).is_none());
    let jinja = "metadata:\n  name: job {{ idx }} of many\n";
    assert!(structural_template_markers(jinja).is_none());
    // One that starts a value changes what the file reads as.
    assert!(structural_template_markers("spec:\n  replicas: {{ .Replicas }}\n").is_some());
    assert!(structural_template_markers("args:\n  - {{ $value }}\n").is_some());
    assert!(
        structural_template_markers("{{- if .Values.gpu }}\nkind: Pod\n{{- end }}\n").is_some()
    );
}

#[test]
fn markers_on_the_next_lines_of_a_quoted_scalar_are_its_text() {
    // A Jinja chat template in a ConfigMap, written as one double-quoted string over lines.
    let chat = "apiVersion: v1\ndata:\n  chat.jinja: \"{%- set v = \\\"x\\\"\n    -%}\\n{#- guard -#}\\n{{- bos -}}\n    {%- endif %}\"\nkind: ConfigMap\n";
    assert!(syntax_error(&parse(chat, Default::default())).is_none());
    assert!(structural_template_markers(chat).is_none(), "{chat}");
    // A manifest passed as a single-quoted argument (`''` is a quote).
    let arg = "args:\n  - 'it''s\n    {{inputs.parameters.name}}\n    done'\n  - {{ .Values.x }}\n";
    let h = structural_template_markers(arg).unwrap();
    assert_eq!(h.marker, "{{ .Values.x }}");
    // Once the string closes, the file's own lines count again.
    let after = "a: \"one\n  two\"\nb: {{ .Values.y }}\n";
    assert!(structural_template_markers(after).is_some());
    // A plain scalar a build folded over lines: its next line is text, whatever it starts with.
    let alert = "groups:\n  - rules:\n      - annotations:\n          description: GPU {{ $labels.gpu }} is at\n            {{ $value }}°C\n          summary: hot\n";
    assert!(structural_template_markers(alert).is_none(), "{alert}");
    let item = "args:\n  - run the job with\n    {{ .Values.flags }}\n";
    assert!(structural_template_markers(item).is_none(), "{item}");
    // A key under an item is no continuation.
    let keys = "containers:\n  - name: a\n    image: {{ .Values.image }}\n";
    assert!(structural_template_markers(keys).is_some());
    // A quote inside a plain scalar or a comment opens nothing.
    let plain = "note: it's fine # don't\nb: {{ .Values.y }}\n";
    assert!(structural_template_markers(plain).is_some());
}

#[test]
fn envsubst_names_in_flow_lists_are_templates_only_where_parsing_fails() {
    let src = "spec:\n  matchExpressions:\n    - key: zone\n      operator: In\n      values: [${SORTED_CLUSTER_LIST}]\n";
    let h = template_markers(src).unwrap();
    assert_eq!(h.kind, "envsubst template");
    assert_eq!(h.marker, "${SORTED_CLUSTER_LIST}");
    assert_eq!(h.span.start_pos(src).line, 5);
    assert!(template_markers("values: [a, ${B}]\n").is_some());
    // A value of its own is a plain string YAML reads fine; a file that parses is linted.
    assert!(template_markers("image: ${IMAGE}\n").is_none());
    assert!(structural_template_markers(src).is_none());
}

#[test]
fn python_format_fields_as_whole_values_are_templates_even_where_parsing_succeeds() {
    // `name: {name}` parses as a mapping of `name` to null: a Python `str.format` template.
    let src = "apiVersion: kubeflow.org/v1beta1\nkind: Notebook\nmetadata:\n  name: {name}\n  namespace: \"{namespace}\"\nspec:\n  paths:\n    - {paths}  # filled in\n";
    let h = structural_template_markers(src).unwrap();
    assert_eq!(h.kind, "format template");
    assert_eq!(h.marker, "{name}");
    assert_eq!(h.span.start_pos(src).line, 4);
    assert!(structural_template_markers("spec:\n  - {paths} # x\n").is_some());
    // Flow mappings a manifest writes stay YAML.
    assert!(structural_template_markers("labels: {app: web}\nselector: {}\n").is_none());
    assert!(structural_template_markers("data: {a, b}\n").is_none());
    assert!(structural_template_markers("msg: see {name} here\n").is_none());
}

#[test]
fn fill_in_placeholders_that_break_the_yaml() {
    use crate::yaml::compat::placeholder_markers;
    let route = "rules:\n  - path: { type: Exact, value: ${ISVC_PATH}/v1 }\n";
    let hint = placeholder_markers(route).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("envsubst template", "${ISVC_PATH}")
    );
    assert_eq!(&route[hint.span.range()], "${ISVC_PATH}");
    // Still broken once filled in (a tab indents a key): broken YAML, not a template.
    assert!(placeholder_markers("a:\n\tb: ${X}\n").is_none());
    // No placeholder at all.
    assert!(placeholder_markers("a: {b\n").is_none());
    // A `sed` target: a plain scalar cannot start with `%`.
    let hosts = "hosts:\n  - %TARGET%.%ZONE%\n";
    let hint = placeholder_markers(hosts).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("sed template", "%TARGET%")
    );
    // A script's `replace('@name_k8s@', …)` target: nor can one start with `@`.
    let job =
        "metadata:\n  name: @name_k8s@\n  labels:\n    kueue.x-k8s.io/queue-name: @k8s_queue@\n";
    let hint = placeholder_markers(job).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("@NAME@ template", "@name_k8s@")
    );
    // One alone on its line stands for lines (a block of containers, or nothing).
    let spec = "spec:\n  containers:\n    @sidecar_containers@\n    - name: @engine@\n";
    assert_eq!(
        placeholder_markers(spec).expect("a template").marker,
        "@sidecar_containers@"
    );
    // Doubled, as a Makefile's `sed s/@@DOCKER_IMAGE_TAG@@/…/` fills it.
    let deploy = "containers:\n  - name: watcher\n    image: @@DOCKER_IMAGE_TAG@@\n";
    let hint = placeholder_markers(deploy).expect("a template");
    assert_eq!(hint.marker.as_str(), "@@DOCKER_IMAGE_TAG@@");
    assert_eq!(&deploy[hint.span.range()], "@@DOCKER_IMAGE_TAG@@");
    // An install script's `__NAME__` tokens, alone on their lines, one of them inside a block
    // scalar that it must not end.
    let cluster = "experimental:\n  docker:\n__DOCKER_ARGS__\n  deploy:\n    manifests: |-\n      kind: Secret\n__EXTRA_LABELS__\n      type: Opaque\n";
    let hint = placeholder_markers(cluster).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("__NAME__ template", "__DOCKER_ARGS__")
    );
    // Python's dunder names are lower case: not tokens.
    assert!(placeholder_markers("a: {b\nc: __init__\n").is_none());
    // An address is no placeholder.
    assert!(placeholder_markers("owner: @team\n").is_none());
    assert!(placeholder_markers("owner: @@team\n").is_none());
    // A workshop's fill-in, to replace by hand before applying.
    let policy = "spec:\n  ingress:\n    - from:\n        - <EDIT: ADD THE FRONTEND'S POD SELECTOR>\n            <EDIT: ADD THE FRONTEND'S POD SELECTOR>\n      ports:\n        - {port: 6379}\n";
    let hint = placeholder_markers(policy).expect("a template");
    assert_eq!(hint.kind, "<name> placeholder");
    assert_eq!(hint.marker, "<EDIT: ADD THE FRONTEND'S POD SELECTOR>");
    // Angle brackets in a string that breaks for another reason are no template.
    assert!(placeholder_markers("a:\n\tb: <c>\n").is_none());
    // A documentation build's substitution: a scalar cannot start with `|` either.
    let policy = "spec:\n  ofedDriver:\n    image: doca-driver\n    repository: |doca-driver-repository|\n    version: |doca-driver-version|\n";
    let hint = placeholder_markers(policy).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("|name| template", "|doca-driver-repository|")
    );
    // A block scalar is no placeholder, nor is a table in its text.
    assert!(placeholder_markers("a: |\n  | x | y |\n b: {\n").is_none());
    // In lower case, with dashes, after a comment that holds `%` signs of its own.
    let svc = "spec:\n  selector:\n    # the %notebook-name is the server's name%\n    notebook-name: %notebook-name%\n";
    let hint = placeholder_markers(svc).expect("a template");
    assert_eq!(hint.marker.as_str(), "%notebook-name%");
    // A Backstage scaffolder expression in a flow list, where `{` opens a mapping.
    let vars = "vars:\n  - name: cidrs\n    value: [ ${{ values.tfVars.cidrs }} ]\n  - name: region\n    value: ${{ values.region }}\n";
    let hint = placeholder_markers(vars).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("expression template", "${{ values.tfVars.cidrs }}")
    );
    assert!(placeholder_markers("value: [ ${{ values.x ]\n").is_none());
}

#[test]
fn step_functions_parameters_are_a_template() {
    // The Job of an `eks:runJob` state: `.$` keys take the execution's input.
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name.$: $.submission.name\nspec:\n  template:\n    spec:\n      nodeSelector:\n        \"node.kubernetes.io/instance-type.$\": States.Format('{}', $.type)\n";
    let hint = step_functions_parameters(job).expect("a template");
    assert_eq!(
        (hint.kind, hint.marker.as_str()),
        ("AWS Step Functions parameters", "name.$: $.submission.name")
    );
    assert_eq!(&job[hint.span.range()], "name.$: $.submission.name");
    // A `$` in a value, a key ending in `.$` with a plain value, or one in a comment is not.
    assert!(step_functions_parameters("price: 3.$\nname.$: plain\n# a.$: $.b\n").is_none());
}

#[test]
fn bracketed_upper_case_tokens_as_whole_values_are_templates() {
    // A script replaces `[[NODES]]` and `[[CPU]]` by string substitution before applying.
    let src = "apiVersion: flux-framework.org/v1alpha2\nkind: MetricSet\nspec:\n  pods: [[NODES]]\n  resources:\n    limits:\n      cpu: [[CPU]]  # per pod\n";
    let h = structural_template_markers(src).unwrap();
    assert_eq!(h.kind, "[[NAME]] template");
    assert_eq!(h.marker, "[[NODES]]");
    assert_eq!(h.span.start_pos(src).line, 4);
    assert!(structural_template_markers("args:\n  - [[NP]]\n").is_some());
    // Nested flow lists a manifest writes stay YAML.
    assert!(structural_template_markers("matrix: [[1, 2], [3, 4]]\n").is_none());
    assert!(structural_template_markers("a: [[x]]\nb: [[AB], [C]]\n").is_none());
    assert!(structural_template_markers("cmd: echo [[NODES]]\n").is_none());
}

#[test]
fn lists_of_choices_as_whole_values_are_field_references() {
    // A Pod field reference: each value says what may stand there.
    let src = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: String\nspec:\n  restartPolicy: [Always | Never | OnFailure] # one of these\n";
    let h = structural_template_markers(src).unwrap();
    assert_eq!(h.kind, "field reference");
    assert_eq!(h.marker, "[Always | Never | OnFailure]");
    assert_eq!(h.span.start_pos(src).line, 6);
    // A shell pipeline or a list a manifest writes stays YAML.
    assert!(structural_template_markers("args: [cat a | grep b]\n").is_none());
    assert!(structural_template_markers("args: [a, b | c]\n").is_none());
    assert!(structural_template_markers("x: [a | b] and more\n").is_none());
    assert!(structural_template_markers("cmd: echo [A | B]\n").is_none());
}
