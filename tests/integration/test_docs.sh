#!/usr/bin/env bash
# The reference documentation against the code:
# - every option the configuration parser accepts (the strcasecmp("Key", ...)
#   calls of the collectd glue in plugin/, and the detector options, rows
#   {"Key", NL_OPTION_...} of the classes and the engine in
#   plugin/core/detect/) has a section in
#   docs/configuration.md whose heading names it in backticks and which
#   gives its default and an example; and every option heading there is an
#   option the parser accepts;
# - every class of NL_CLASS_LIST (plugin/core/model/nl_finding.h) has a
#   heading in docs/detectors.md and a row in the README's class table;
# - every type the plugin dispatches, and every type of
#   types.db.d/nats_lens.db, appears in docs/metrics.md, with every literal
#   type instance.
# No server is started.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin docs
cd "$NL_ROOT" || exit 1
CONFIG_DOC=docs/configuration.md
DETECTORS_DOC=docs/detectors.md
METRICS_DOC=docs/metrics.md

# The glue files: those that parse collectd configuration items.
GLUE=$(grep -l 'oconfig_item_t' plugin/glue/*.c)

# option_keys: the option keys the glue compares with strcasecmp (against
# key, child->key or ci->key; comparisons of option values are left out),
# and the detector options' rows, one a line.
option_keys() {
  {
    # shellcheck disable=SC2086
    grep -ohP 'strcasecmp\(\s*"\K[A-Za-z0-9_]+(?="\s*,\s*[a-z_]*(->)?key\s*\))|strcasecmp\(\s*[a-z_]*(->)?key\s*,\s*"\K[A-Za-z0-9_]+(?="\s*\))' \
      $GLUE
    grep -ohP '^\s*\{"\K[A-Za-z0-9_]+(?=",\s*NL_OPTION_)' plugin/core/detect/*.c
  } | sort -u
}

# section_of KEY: the text of the section of docs/configuration.md whose
# heading names `KEY`, up to the next heading.
section_of() {
  awk -v key="\`$1\`" '
    /^#/ { if (on) exit; if ($0 ~ /^#+ / && index($0, key)) on = 1 }
    on' "$CONFIG_DOC"
}

# expect_none NAME LIST DETAIL WHY: PASS NAME (DETAIL) when LIST is empty,
# else FAIL NAME with WHY followed by LIST.
expect_none() {
  if [ -z "$2" ]; then
    nl_pass "$1" "$3"
  else
    nl_fail "$1" "$4:$2"
  fi
}

keys=$(option_keys)
nkeys=$(echo "$keys" | grep -c .)
# The extraction itself must work: the parser has at least these.
if [ "$nkeys" -ge 10 ] && echo "$keys" | grep -qx URL &&
  echo "$keys" | grep -qx Instance; then
  nl_pass options/extracted "$nkeys keys from $(echo $GLUE)"
else
  nl_fail options/extracted "only $nkeys keys found in $(echo $GLUE)"
fi

if [ ! -f "$CONFIG_DOC" ]; then
  nl_fail options/documented "$CONFIG_DOC is missing"
else
  undocumented=
  incomplete=
  for key in $keys; do
    section=$(section_of "$key")
    if [ -z "$section" ]; then
      undocumented="$undocumented $key"
    elif ! echo "$section" | grep -q 'Default:' ||
      ! echo "$section" | grep -q 'Example:'; then
      incomplete="$incomplete $key"
    fi
  done
  expect_none options/documented "$undocumented" \
    "all $nkeys have a heading in $CONFIG_DOC" "no heading in $CONFIG_DOC for"
  expect_none options/default-and-example "$incomplete" \
    "each section gives both" "no Default: or Example: for"
  # Headings naming an option-like word in backticks must be real options.
  stale=
  for word in $(grep -E '^#{2,4} ' "$CONFIG_DOC" |
    grep -oE '`[A-Z][A-Za-z0-9]*`' | tr -d '`' | sort -u); do
    echo "$keys" | grep -qx "$word" || stale="$stale $word"
  done
  expect_none options/no-stale "$stale" "every option heading is an option" \
    "documented but not accepted by the parser"
fi

# Classes: the rows X(ID, suffix, SEVERITY, SCOPE) of NL_CLASS_LIST, each
# with its definition nl_class_<suffix> in a file under plugin/core/detect/.
rows=$(grep -oP '^\s*X\(\K[A-Z_]+, [a-z_]+(?=, (WARNING|CRITICAL), (CONSUMER|STREAM)\))' \
  plugin/core/model/nl_finding.h)
classes=$(echo "$rows" | cut -d, -f1)
nclasses=$(echo "$classes" | grep -c .)
undefined=
for suffix in $(echo "$rows" | cut -d' ' -f2); do
  [ "$(grep -lE "^const nl_class_def nl_class_$suffix = \{" plugin/core/detect/*.c |
    grep -c .)" = 1 ] || undefined="$undefined $suffix"
done
if [ "$nclasses" -ge 19 ] && [ -z "$undefined" ]; then
  nl_pass classes/extracted "$nclasses classes, each defined once"
else
  nl_fail classes/extracted "$nclasses rows in NL_CLASS_LIST; no single definition for:$undefined"
fi
if [ ! -f "$DETECTORS_DOC" ]; then
  nl_fail classes/documented "$DETECTORS_DOC is missing"
else
  missing=
  for cls in $classes; do
    grep -qE "^#{2,4} .*\b$cls\b" "$DETECTORS_DOC" || missing="$missing $cls"
  done
  expect_none classes/documented "$missing" \
    "each has a heading in $DETECTORS_DOC" "no heading in $DETECTORS_DOC for"
fi
# The README's one table of the classes has a row for each.
missing=
for cls in $classes; do
  grep -qE "^\| $cls \|" README.md || missing="$missing $cls"
done
expect_none classes/in-readme "$missing" \
  "each has a row in the README's table" "no row in the README's table for"

# Metrics: literal types and type instances of the submit calls in the
# glue, the per-class types (nats_lens_<suffix>), and the types database.
# (Calls and table entries may span lines: the files are read as one line.)
# shellcheck disable=SC2086
glue_flat=$(cat plugin/glue/*.c | tr '\n' ' ')
dispatched=$(echo "$glue_flat" |
  grep -oP 'submit_[a-z]+\([^,]+,\s*[^,]+,\s*"\K[a-z_]+(?=")')
instances=$(echo "$glue_flat" |
  grep -oP 'submit_[a-z]+\([^,]+,\s*[^,]+,\s*"[a-z_]+",\s*"\K[a-z_]+(?=")')
suffixes=$(echo "$rows" | cut -d' ' -f2 | sed 's/^/nats_lens_/')
typesdb=$(awk '/^[a-z]/ { print $1 }' types.db.d/nats_lens.db)
all_types=$(printf '%s\n' $dispatched $suffixes $typesdb | sort -u)
ntypes=$(echo "$all_types" | grep -c .)
if [ "$ntypes" -ge 10 ] && echo "$all_types" | grep -qx nats_lens_num_pending &&
  echo "$all_types" | grep -qx count &&
  [ "$(echo "$suffixes" | grep -c .)" = "$nclasses" ]; then
  nl_pass metrics/extracted "$ntypes types, $(echo "$instances" | sort -u | grep -c .) type instances"
else
  nl_fail metrics/extracted "only $ntypes types found, \
$(echo "$suffixes" | grep -c .) class types for $nclasses classes"
fi
# Every nats_lens_* type dispatched must be in the types database, or
# collectd drops its values ("Dataset not found").
notindb=
for t in $(printf '%s\n' $dispatched $suffixes | grep '^nats_lens_' | sort -u); do
  echo "$typesdb" | grep -qx "$t" || notindb="$notindb $t"
done
expect_none metrics/types-db "$notindb" \
  "every nats_lens_* type is in types.db.d/nats_lens.db" \
  "dispatched but not in types.db.d/nats_lens.db"
if [ ! -f "$METRICS_DOC" ]; then
  nl_fail metrics/documented "$METRICS_DOC is missing"
else
  missing=
  for t in $all_types $(echo "$instances" | sort -u); do
    grep -qF "\`$t\`" "$METRICS_DOC" || missing="$missing $t"
  done
  expect_none metrics/documented "$missing" \
    "every type and type instance in $METRICS_DOC" "not in $METRICS_DOC"
fi
# Every class gauge has its Prometheus alert, its Graphite roll-up by max,
# and its place in the InfluxDB query of docs/outputs.md (they were written
# for the first five classes and missed the others).
noalert=
for t in $suffixes; do
  grep -q "collectd_nats_lens_${t} == 1" examples/prometheus-alerts.yml ||
    noalert="$noalert $t"
  for f in examples/backends/carbon-storage-aggregation.conf docs/outputs.md; do
    grep -E '^pattern = .*nats_lens_\(' "$f" | grep -q "[(|]${t#nats_lens_}[|)]" ||
      noalert="$noalert $t($f)"
  done
  grep -E 'type" =~ /\^nats_lens_\(' docs/outputs.md | grep -q "[(|]${t#nats_lens_}[|)]" ||
    noalert="$noalert $t(influxdb query)"
done
expect_none metrics/every-class-in-backends "$noalert" \
  "$(echo "$suffixes" | grep -c .) classes: alert, roll-up and query each" \
  "left out"
# Every file path the docs name in backticks, and every relative link,
# exists in the checkout (the docs are self-contained).
nopath=
npaths=0
for f in README.md docs/*.md examples/README.md packaging/LINTIAN.md; do
  for p in $(grep -oE '`(plugin|tests|examples|docs|results|packaging|types\.db\.d|cli|\.ci)/[A-Za-z0-9_./-]*`' "$f" |
    tr -d '`' | sort -u); do
    p=${p%/}
    p=${p%.}
    npaths=$((npaths + 1))
    [ -e "$p" ] || nopath="$nopath $f:$p"
  done
  for l in $(grep -oE '\]\((\.\./)?[A-Za-z0-9_./-]+(#[a-z0-9-]*)?\)' "$f" |
    sed 's|^\](||; s|)$||; s|#.*||'); do
    npaths=$((npaths + 1))
    [ -e "$(dirname "$f")/$l" ] || nopath="$nopath $f->$l"
  done
done
expect_none paths-exist "$nopath" "$npaths paths and links" "missing"
# The REST endpoints the docs name are the ones the server routes.
noroute=
for e in $(grep -ohE '`/(api/[a-z]+|healthz)' README.md docs/*.md | tr -d '`' | sort -u); do
  grep -qE "\"$e/?\"" plugin/http/nl_route.c || noroute="$noroute $e"
done
expect_none endpoints-routed "$noroute" "every endpoint the docs name is routed" "not routed"
nl_end
