/* nl_config.c: an <Instance> block read into an instance: its options
 * (each read by a config_* function, an unknown one warned about), the
 * options that hold only together, then what the instance needs made at
 * configuration time: its connections, poll log, engine and listener.
 * Only collectd's configuration callback reads a block, before any thread
 * of the instance exists; nats_lens.c registers each instance read. */
#include "nl_config.h"

#include "core/nl_engine.h"
#include "core/report/nl_health.h"
#include "http/nl_http.h"
#include "jsapi/nl_poll_log.h"
#include "jsapi/nl_transport.h"
#include "jsapi/nl_transport_check.h"

/* Appends a copy of the string option in ci to the list (collectd's
 * strarray). */
static int config_append(oconfig_item_t *ci, char ***list, size_t *n) {
  char *s = NULL;
  if (cf_util_get_string(ci, &s) != 0)
    return -1;
  int status = strarray_add(list, n, s);
  free(s);
  return status;
}

/* Reads Scope "cluster" (every server's view, the default) or "server"
 * (the connected server's alone). */
static int config_scope(oconfig_item_t *ci, nl_instance *inst) {
  char *v = NULL;
  if (cf_util_get_string(ci, &v) != 0)
    return -1;
  int status = 0;
  if (strcasecmp(v, "server") == 0)
    inst->server_scope = true;
  else if (strcasecmp(v, "cluster") == 0)
    inst->server_scope = false;
  else {
    ERROR(LOG_PREFIX "Instance \"%s\": Scope \"%s\": expected \"cluster\" "
                     "or \"server\".",
          inst->name, v);
    status = -1;
  }
  free(v);
  return status;
}

/* Reads detector option o (a row of a class's definition or of the
 * engine's, core/detect/nl_options.h) into inst's thresholds. */
static int config_detector_option(oconfig_item_t *ci, nl_instance *inst,
                                  const nl_option *o) {
  double v = 0;
  char why[160];
  if (cf_util_get_double(ci, &v) != 0)
    v = -1; /* Not a number: refused below, saying what it needs. */
  if (nl_option_set(o, &inst->params, v, why, sizeof(why)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option %s %s.", inst->name, ci->key,
          why);
    return -1;
  }
  return 0;
}

/* Reads Timeout: 0.01 to 600 seconds (cnats counts it in whole
 * milliseconds, and below that a request could not even be sent). */
static int config_timeout(oconfig_item_t *ci, nl_instance *inst) {
  double v = 0;
  if (cf_util_get_double(ci, &v) != 0 || !(v >= 0.01) || v > 600) {
    ERROR(LOG_PREFIX "Instance \"%s\": option Timeout needs 0.01 to 600 "
                     "seconds.",
          inst->name);
    return -1;
  }
  inst->timeout_s = v;
  return 0;
}

/* Reads HealthSubjectPrefix into inst->health. */
static int config_prefix(oconfig_item_t *ci, nl_instance *inst) {
  char *prefix = NULL;
  if (cf_util_get_string(ci, &prefix) != 0)
    return -1;
  int status = nl_health_set_prefix(&inst->health, prefix);
  if (status != 0)
    ERROR(LOG_PREFIX "Instance \"%s\": HealthSubjectPrefix \"%s\" is not a "
                     "subject prefix (tokens separated by '.', without "
                     "spaces or the wildcards '*' and '>', at most %d "
                     "bytes).",
          inst->name, prefix, NL_EVENT_PREFIX_MAX);
  free(prefix);
  return status;
}

/* Reads SummaryInterval (seconds, 0 turns summaries off). */
static int config_summary_interval(oconfig_item_t *ci, nl_instance *inst) {
  double v = -1;
  if (cf_util_get_double(ci, &v) != 0 || !(v >= 0) || v > 86400) {
    ERROR(LOG_PREFIX "Instance \"%s\": option SummaryInterval needs a number "
                     "of seconds from 0 (off) to 86400.",
          inst->name);
    return -1;
  }
  inst->health.summary_interval_ns = (int64_t)(v * 1e9);
  return 0;
}

/* Reads Listen "host" "port" (the port may also be a bare number). */
static int config_listen(oconfig_item_t *ci, nl_instance *inst) {
  char port[16] = "";
  if (ci->values_num == 2 && ci->values[0].type == OCONFIG_TYPE_STRING) {
    if (ci->values[1].type == OCONFIG_TYPE_STRING)
      sstrncpy(port, ci->values[1].value.string, sizeof(port));
    else if (ci->values[1].type == OCONFIG_TYPE_NUMBER)
      snprintf(port, sizeof(port), "%.0f", ci->values[1].value.number);
  }
  if (port[0] == '\0') {
    ERROR(LOG_PREFIX "Instance \"%s\": option Listen needs an address and a "
                     "port, as in Listen \"127.0.0.1\" \"9419\".",
          inst->name);
    return -1;
  }
  free(inst->listen_host);
  free(inst->listen_port);
  inst->listen_host = strdup(ci->values[0].value.string);
  inst->listen_port = strdup(port);
  return inst->listen_host && inst->listen_port ? 0 : -1;
}

/* Reads ListenUser "name" "bcrypt hash" into inst->listen_users. */
static int config_listen_user(oconfig_item_t *ci, nl_instance *inst) {
  if (ci->values_num != 2 || ci->values[0].type != OCONFIG_TYPE_STRING ||
      ci->values[1].type != OCONFIG_TYPE_STRING) {
    ERROR(LOG_PREFIX "Instance \"%s\": option ListenUser needs a user name "
                     "and a bcrypt hash of the password, as in ListenUser "
                     "\"ops\" \"$2b$12$...\" (docs/security.md).",
          inst->name);
    return -1;
  }
  if (inst->listen_users == NULL &&
      (inst->listen_users = nl_auth_new()) == NULL)
    return -1;
  char why[256];
  if (nl_auth_add_user(inst->listen_users, ci->values[0].value.string,
                       ci->values[1].value.string, why, sizeof(why)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option ListenUser: %s.", inst->name,
          why);
    return -1;
  }
  return 0;
}

/* Reads AccountAdvisories "account" "credentials file", or "account"
 * "user" "password". */
static int config_account_advisories(oconfig_item_t *ci, nl_instance *inst) {
  bool strings = ci->values_num == 2 || ci->values_num == 3;
  for (int i = 0; strings && i < ci->values_num; i++)
    strings = ci->values[i].type == OCONFIG_TYPE_STRING &&
              ci->values[i].value.string[0] != '\0';
  if (!strings) {
    ERROR(LOG_PREFIX "Instance \"%s\": option AccountAdvisories needs an "
                     "account and a credentials file, or an account, a user "
                     "and a password, as in AccountAdvisories \"ORDERS\" "
                     "\"/etc/collectd/orders.creds\".",
          inst->name);
    return -1;
  }
  struct account_connection *grown =
      realloc(inst->adv_accounts,
              (inst->n_adv_accounts + 1) * sizeof(*inst->adv_accounts));
  if (grown == NULL)
    return -1;
  inst->adv_accounts = grown;
  struct account_connection *a = &grown[inst->n_adv_accounts++];
  *a = (struct account_connection){0};
  a->account = strdup(ci->values[0].value.string);
  if (ci->values_num == 2)
    a->credentials = strdup(ci->values[1].value.string);
  else {
    a->user = strdup(ci->values[1].value.string);
    a->password = strdup(ci->values[2].value.string);
  }
  return a->account != NULL && (a->credentials || a->password) ? 0 : -1;
}

/* Reads ConsumerValues "all" | "findings" | "none". */
static int config_consumer_values(oconfig_item_t *ci, nl_instance *inst) {
  char *v = NULL;
  if (cf_util_get_string(ci, &v) != 0)
    return -1;
  int status = 0;
  if (strcasecmp(v, "all") == 0)
    inst->consumer_values = VALUES_ALL;
  else if (strcasecmp(v, "findings") == 0)
    inst->consumer_values = VALUES_FINDINGS;
  else if (strcasecmp(v, "none") == 0)
    inst->consumer_values = VALUES_NONE;
  else {
    ERROR(LOG_PREFIX "Instance \"%s\": option ConsumerValues must be \"all\", "
                     "\"findings\" or \"none\", not \"%s\".",
          inst->name, v);
    status = -1;
  }
  free(v);
  return status;
}

/* Reads ConsumerValuesLimit: a whole number of consumers, 0 for none. */
static int config_values_limit(oconfig_item_t *ci, nl_instance *inst) {
  int v = -1;
  if (cf_util_get_int(ci, &v) != 0 || v < 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option ConsumerValuesLimit needs a "
                     "whole number of consumers (0 for no limit).",
          inst->name);
    return -1;
  }
  inst->consumer_values_limit = (unsigned)v;
  return 0;
}

/* Reads StreamDeclaration "PATTERN" "KEY" "VALUE": a stream declaration
 * (nl_expect.h) for the streams matching PATTERN, as if their metadata
 * held nats_lens.KEY=VALUE. An unknown key is logged and ignored (a later
 * version may know it); a value that cannot be read is an error. */
static int config_stream_declaration(oconfig_item_t *ci, nl_instance *inst) {
  if (ci->values_num != 3 || ci->values[0].type != OCONFIG_TYPE_STRING ||
      ci->values[1].type != OCONFIG_TYPE_STRING ||
      ci->values[2].type != OCONFIG_TYPE_STRING) {
    ERROR(LOG_PREFIX "Instance \"%s\": StreamDeclaration needs three "
                     "strings: a stream pattern, a key and a value (for "
                     "example \"AUDIT_*\" \"full_ok\" \"true\").",
          inst->name);
    return -1;
  }
  const char *glob = ci->values[0].value.string;
  const char *key = ci->values[1].value.string;
  const char *value = ci->values[2].value.string;
  if (strncmp(key, NL_EXPECT_PREFIX, strlen(NL_EXPECT_PREFIX)) == 0)
    key += strlen(NL_EXPECT_PREFIX);
  if (!nl_expect_stream_key_known(key)) {
    WARNING(LOG_PREFIX "Instance \"%s\": StreamDeclaration \"%s\": unknown "
                       "key \"%s\" ignored (known: full_ok).",
            inst->name, glob, key);
    return 0;
  }
  char why[160];
  if (glob[0] == '\0' || strlen(value) > NL_META_LEN_MAX ||
      nl_expect_stream_check_value(key, value, why, sizeof(why)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": StreamDeclaration \"%s\" \"%s\": %s.",
          inst->name, glob, key,
          glob[0] == '\0'                   ? "the stream pattern is empty"
          : strlen(value) > NL_META_LEN_MAX ? "the value is too long"
                                            : why);
    return -1;
  }
  nl_expect_spec *grown =
      realloc(inst->stream_decls, (inst->n_stream_decls + 1) * sizeof(*grown));
  if (grown == NULL)
    return -1;
  inst->stream_decls = grown;
  nl_expect_spec *d = &inst->stream_decls[inst->n_stream_decls];
  *d = (nl_expect_spec){strdup(glob), NULL, strdup(key), strdup(value)};
  if (d->stream_glob == NULL || d->key == NULL || d->value == NULL) {
    nl_expect_spec_free(d);
    return -1;
  }
  inst->n_stream_decls++;
  return 0;
}

/* Parses the options of one Instance block into inst. */
static int config_instance_options(oconfig_item_t *ci, nl_instance *inst) {
  int status = 0;
  for (int i = 0; i < ci->children_num && status == 0; i++) {
    oconfig_item_t *child = ci->children + i;
    const char *key = child->key;
    if (strcasecmp("URL", key) == 0) {
      status = config_append(child, &inst->urls, &inst->n_urls);
    } else if (strcasecmp("Stream", key) == 0)
      status =
          config_append(child, &inst->select.include, &inst->select.n_include);
    else if (strcasecmp("ExcludeStream", key) == 0)
      status =
          config_append(child, &inst->select.exclude, &inst->select.n_exclude);
    else if (strcasecmp("StreamDeclaration", key) == 0)
      status = config_stream_declaration(child, inst);
    else if (strcasecmp("SystemAccount", key) == 0)
      status = cf_util_get_boolean(child, &inst->system_account);
    else if (strcasecmp("Scope", key) == 0)
      status = config_scope(child, inst);
    else if (strcasecmp("Account", key) == 0)
      status = config_append(child, &inst->account_select.include,
                             &inst->account_select.n_include);
    else if (strcasecmp("AccountAdvisories", key) == 0)
      status = config_account_advisories(child, inst);
    else if (strcasecmp("ExcludeAccount", key) == 0)
      status = config_append(child, &inst->account_select.exclude,
                             &inst->account_select.n_exclude);
    else if (strcasecmp("ConsumerValues", key) == 0)
      status = config_consumer_values(child, inst);
    else if (strcasecmp("ConsumerValuesLimit", key) == 0)
      status = config_values_limit(child, inst);
    else if (strcasecmp("Timeout", key) == 0)
      status = config_timeout(child, inst);
    else if (strcasecmp("Interval", key) == 0)
      status = cf_util_get_cdtime(child, &inst->interval);
    else if (strcasecmp("User", key) == 0)
      status = cf_util_get_string(child, &inst->user);
    else if (strcasecmp("Password", key) == 0)
      status = cf_util_get_string(child, &inst->password);
    else if (strcasecmp("Token", key) == 0)
      status = cf_util_get_string(child, &inst->token);
    else if (strcasecmp("Credentials", key) == 0)
      status = cf_util_get_string(child, &inst->credentials);
    else if (strcasecmp("NKeySeed", key) == 0)
      status = cf_util_get_string(child, &inst->nkey_seed);
    else if (strcasecmp("TLSCA", key) == 0)
      status = cf_util_get_string(child, &inst->tls_ca);
    else if (strcasecmp("TLSCert", key) == 0)
      status = cf_util_get_string(child, &inst->tls_cert);
    else if (strcasecmp("TLSKey", key) == 0)
      status = cf_util_get_string(child, &inst->tls_key);
    else if (strcasecmp("InboxPrefix", key) == 0)
      status = cf_util_get_string(child, &inst->inbox_prefix);
    else if (strcasecmp("PollLog", key) == 0)
      status = cf_util_get_string(child, &inst->poll_log_path);
    else if (strcasecmp("HealthEvents", key) == 0)
      status = cf_util_get_boolean(child, &inst->health.enabled);
    else if (strcasecmp("HealthSubjectPrefix", key) == 0)
      status = config_prefix(child, inst);
    else if (strcasecmp("SummaryInterval", key) == 0)
      status = config_summary_interval(child, inst);
    else if (strcasecmp("Listen", key) == 0)
      status = config_listen(child, inst);
    else if (strcasecmp("ListenTLSCert", key) == 0)
      status = cf_util_get_string(child, &inst->listen_tls_cert);
    else if (strcasecmp("ListenTLSKey", key) == 0)
      status = cf_util_get_string(child, &inst->listen_tls_key);
    else if (strcasecmp("ListenClientCA", key) == 0)
      status = cf_util_get_string(child, &inst->listen_client_ca);
    else if (strcasecmp("ListenUser", key) == 0)
      status = config_listen_user(child, inst);
    else if (strcasecmp("Advisories", key) == 0)
      status = cf_util_get_boolean(child, &inst->advisories);
    else if (strcasecmp("ApiAudit", key) == 0)
      status = cf_util_get_boolean(child, &inst->api_audit);
    else if (nl_option_find(key) != NULL)
      status = config_detector_option(child, inst, nl_option_find(key));
    else
      WARNING(LOG_PREFIX "Instance \"%s\": unknown option \"%s\" ignored.",
              inst->name, key);
    if (status != 0)
      ERROR(LOG_PREFIX "Instance \"%s\": option \"%s\" is invalid.", inst->name,
            key);
  }
  return status;
}

/* The names of the instances configured so far (config time only; kept
 * for the daemon's life). */
static char **configured_names;
static size_t n_configured_names;

/* Checks that name cannot be confused with an instance configured before:
 * values go under plugin instance <instance>-<stream>, so instances "real"
 * and "real-eu" would both write "real-eu-..." (stream "eu-..." of the
 * first, any stream of the second). Records the name when it is clear.
 * Returns 0, or -1 after logging why. */
static int check_name_unambiguous(const char *name) {
  for (size_t i = 0; i < n_configured_names; i++) {
    const char *old = configured_names[i];
    size_t lo = strlen(old), ln = strlen(name);
    const char *shorter = lo < ln ? old : name, *longer = lo < ln ? name : old;
    size_t ls = lo < ln ? lo : ln;
    if (lo != ln && strncmp(longer, shorter, ls) == 0 && longer[ls] == '-') {
      ERROR(LOG_PREFIX "Instance \"%s\": its values could not be told from "
                       "those of Instance \"%s\" (plugin instances are "
                       "<instance>-<stream>, and \"%s-...\" is both): rename "
                       "one of them.",
            name, old, longer);
      return -1;
    }
  }
  return strarray_add(&configured_names, &n_configured_names, name) == 0 ? 0
                                                                         : -1;
}

/* Reads the name of an Instance block into inst->name and checks it: 1 to
 * 63 characters without '/', and not to be confused with an instance
 * configured before (check_name_unambiguous). Returns 0, or -1 after
 * logging why. */
static int config_name(oconfig_item_t *ci, nl_instance *inst) {
  if (cf_util_get_string(ci, &inst->name) != 0) {
    ERROR(LOG_PREFIX "an Instance block needs exactly one name, as in "
                     "<Instance \"local\">.");
    return -1;
  }
  if (inst->name[0] == '\0' || strchr(inst->name, '/') != NULL ||
      strlen(inst->name) > 63) {
    ERROR(LOG_PREFIX "Instance \"%s\": the name must be 1 to 63 characters "
                     "without '/'.",
          inst->name);
    return -1;
  }
  return check_name_unambiguous(inst->name);
}

/* Checks the options that hold only together with others: Account,
 * ExcludeAccount and AccountAdvisories need SystemAccount true, Scope
 * "server" needs SystemAccount true and exactly one URL, and PollLog does
 * not go with SystemAccount true. Returns 0, or -1 after logging the first
 * that does not hold, in that order. */
static int check_combinations(const nl_instance *inst) {
  if (!inst->system_account && (inst->account_select.n_include > 0 ||
                                inst->account_select.n_exclude > 0)) {
    ERROR(LOG_PREFIX "Instance \"%s\": options Account and ExcludeAccount "
                     "need SystemAccount true (without it the instance sees "
                     "only its own account).",
          inst->name);
    return -1;
  }
  if (!inst->system_account && inst->n_adv_accounts > 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option AccountAdvisories needs "
                     "SystemAccount true (an ordinary Instance receives its "
                     "own account's advisories).",
          inst->name);
    return -1;
  }
  if (inst->server_scope && (!inst->system_account || inst->n_urls != 1)) {
    ERROR(LOG_PREFIX "Instance \"%s\": Scope \"server\" needs SystemAccount "
                     "true and exactly one URL, the NATS server on this "
                     "host (docs/agents.md).",
          inst->name);
    return -1;
  }
  if (inst->system_account && inst->poll_log_path != NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog is not available with "
                     "SystemAccount true.",
          inst->name);
    return -1;
  }
  return 0;
}

/* Checks the options of the listener's protection: each needs Listen,
 * ListenTLSCert and ListenTLSKey go together, and ListenClientCA needs
 * them. Warns that ListenUser without TLS sends passwords in clear.
 * Returns 0, or -1 after logging the first that does not hold. */
static int check_listen_protection(const nl_instance *inst) {
  bool any = inst->listen_tls_cert || inst->listen_tls_key ||
             inst->listen_client_ca || inst->listen_users;
  const char *why = NULL;
  if (any && inst->listen_host == NULL)
    why = "options ListenTLSCert, ListenTLSKey, ListenClientCA and "
          "ListenUser need Listen";
  else if ((inst->listen_tls_cert == NULL) != (inst->listen_tls_key == NULL))
    why = "options ListenTLSCert and ListenTLSKey go together";
  else if (inst->listen_client_ca && !inst->listen_tls_cert)
    why = "option ListenClientCA needs ListenTLSCert and ListenTLSKey";
  if (why != NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, why);
    return -1;
  }
  if (inst->listen_users && !inst->listen_tls_cert)
    WARNING(LOG_PREFIX "Instance \"%s\": ListenUser without ListenTLSCert: "
                       "passwords cross the network in clear; bind Listen "
                       "to loopback or add TLS.",
            inst->name);
  return 0;
}

/* Turns off the advisories of a SystemAccount instance, and says so: the
 * system account receives no account's advisories, and the classes they
 * speed up come from the polls (docs/system-account.md). The accounts of
 * AccountAdvisories keep theirs, on connections of their own. */
static void system_account_advisories(nl_instance *inst) {
  if (!inst->system_account || !inst->advisories)
    return;
  INFO(LOG_PREFIX "Instance \"%s\": SystemAccount: findings come from "
                  "polling every account; advisories are received only "
                  "for the %zu account(s) of AccountAdvisories.",
       inst->name, inst->n_adv_accounts);
  inst->advisories = false;
}

/* Makes the instance's connection from its URL, Timeout, credential, TLS
 * and InboxPrefix options, and one connection for each AccountAdvisories
 * entry (the same servers and TLS, the account's own credentials). None
 * connects yet: the poll thread does. Returns 0, or -1 after logging why
 * (URL missing, options that do not go together, a file that cannot be
 * read). */
static int create_transports(nl_instance *inst) {
  if (inst->n_urls == 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option URL is missing (for example "
                     "URL \"nats://127.0.0.1:4222\").",
          inst->name);
    return -1;
  }
  nl_transport_config tc = {
      .urls = (const char *const *)inst->urls,
      .n_urls = inst->n_urls,
      .timeout_ms = (int64_t)(inst->timeout_s * 1000.0),
      .name = "nats-lens collectd",
      .user = inst->user,
      .password = inst->password,
      .token = inst->token,
      .credentials_file = inst->credentials,
      .nkey_seed_file = inst->nkey_seed,
      .tls_ca_file = inst->tls_ca,
      .tls_cert_file = inst->tls_cert,
      .tls_key_file = inst->tls_key,
      .inbox_prefix = inst->inbox_prefix,
      .listed_servers_only = inst->server_scope,
  };
  static const nl_transport_names names = {
      "option ",     "options ", "URL",   "User",    "Password", "Token",
      "Credentials", "NKeySeed", "TLSCA", "TLSCert", "TLSKey"};
  char err[512];
  if (nl_transport_config_check(&tc, &names, err, sizeof(err)) != 0 ||
      nl_transport_create(&tc, &inst->transport, err, sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
    return -1;
  }
  for (size_t i = 0; i < inst->n_adv_accounts; i++) {
    struct account_connection *a = &inst->adv_accounts[i];
    nl_transport_config ac = tc;
    ac.user = a->user;
    ac.password = a->password;
    ac.token = NULL;
    ac.nkey_seed_file = NULL;
    ac.credentials_file = a->credentials;
    ac.name = "nats-lens collectd advisories";
    if (nl_transport_config_check(&ac, &names, err, sizeof(err)) != 0 ||
        nl_transport_create(&ac, &a->transport, err, sizeof(err)) != 0) {
      ERROR(LOG_PREFIX "Instance \"%s\": AccountAdvisories \"%s\": %s.",
            inst->name, a->account, err);
      return -1;
    }
  }
  return 0;
}

/* Opens the file of option PollLog, when it names one. Returns 0, or -1
 * after logging why. */
static int open_poll_log(nl_instance *inst) {
  char err[512];
  if (inst->poll_log_path != NULL &&
      nl_poll_log_open(inst->poll_log_path, &inst->poll_log, err,
                       sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog: %s.", inst->name, err);
    return -1;
  }
  return 0;
}

/* Makes the instance's engine with its detector options. Returns 0, or -1
 * after logging that memory ran out. */
static int create_engine(nl_instance *inst) {
  inst->engine = nl_engine_create(&inst->params);
  if (inst->engine == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    return -1;
  }
  return 0;
}

/* Binds the listener of option Listen, when set, now, so that an address
 * in use refuses the configuration (it serves from nl_init). Its documents
 * are stale when no poll started for three intervals and a Timeout.
 * Without libmicrohttpd only the listener is lost: logged, and 0 returned,
 * since the instance still polls and notifies. Returns 0, or -1 after
 * logging why. */
static int bind_listener(nl_instance *inst) {
  if (inst->listen_host == NULL)
    return 0;
  cdtime_t interval =
      inst->interval ? inst->interval : cf_get_default_interval();
  char err[512];
  nl_tls_files tls = {0};
  if (inst->listen_tls_cert != NULL &&
      nl_tls_load(inst->listen_tls_cert, inst->listen_tls_key,
                  inst->listen_client_ca, &tls, err, sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option %s.", inst->name, err);
    return -1;
  }
  nl_http_config hc = {inst->listen_host,
                       inst->listen_port,
                       inst->name,
                       inst->system_account ? NULL : inst->engine,
                       (int64_t)CDTIME_T_TO_NS(3 * interval) +
                           (int64_t)(inst->timeout_s * 1e9),
                       inst->listen_tls_cert ? &tls : NULL,
                       inst->listen_users};
  int rc = nl_http_create(&hc, &inst->http, err, sizeof(err));
  nl_tls_files_free(&tls);
  if (rc == NL_HTTP_NO_LIBRARY) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s; it polls without the REST API "
                     "and dashboard.",
          inst->name, err);
    return 0;
  }
  if (rc != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
    return -1;
  }
  return 0;
}

nl_instance *nl_config_instance(oconfig_item_t *ci) {
  nl_instance *inst = nl_instance_new_defaults();
  if (inst == NULL)
    return NULL;
  if (config_name(ci, inst) != 0 || config_instance_options(ci, inst) != 0 ||
      check_combinations(inst) != 0 || check_listen_protection(inst) != 0)
    goto fail;
  system_account_advisories(inst);
  if (create_transports(inst) != 0 || open_poll_log(inst) != 0 ||
      create_engine(inst) != 0 || bind_listener(inst) != 0)
    goto fail;
  return inst;

fail:
  nl_instance_free(inst);
  return NULL;
}
