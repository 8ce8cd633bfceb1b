/* nl_instance.c: the lifetime of an instance (one <Instance> block, or one
 * account of a SystemAccount instance): made with its locks, complaints
 * and defaults, and freed with everything it owns, in the order the thread
 * model at the top of nats_lens.c requires. */
#include "nl_instance.h"

#include "core/detect/nl_options.h"
#include "core/model/nl_expect.h"
#include "core/nl_engine.h"
#include "core/report/nl_health.h"
#include "http/nl_http.h"
#include "jsapi/nl_advisory_thread.h"
#include "jsapi/nl_poll_log.h"
#include "jsapi/nl_transport.h"
#include "nl_poller.h"

nl_instance *nl_instance_new(void) {
  nl_instance *inst = calloc(1, sizeof(*inst));
  if (inst == NULL)
    return NULL;
  pthread_mutex_init(&inst->engine_lock, NULL);
  pthread_mutex_init(&inst->created_lock, NULL);
  pthread_mutex_init(&inst->send_lock, NULL);
  C_COMPLAIN_INIT(&inst->poll_complaint);
  C_COMPLAIN_INIT(&inst->connect_complaint);
  C_COMPLAIN_INIT(&inst->publish_complaint);
  C_COMPLAIN_INIT(&inst->overrun_complaint);
  C_COMPLAIN_INIT(&inst->account_info_complaint);
  return inst;
}

nl_instance *nl_instance_new_defaults(void) {
  nl_instance *inst = nl_instance_new();
  if (inst == NULL)
    return NULL;
  nl_detect_params_default(&inst->params);
  inst->params.config_classes = true;
  inst->advisories = true;
  nl_health_init(&inst->health);
  inst->timeout_s = 2.0;
  inst->consumer_values_limit = NL_DEFAULT_VALUES_LIMIT;
  return inst;
}

/* Frees the AccountAdvisories entries of inst not handed to an account
 * instance yet, with their connections. */
static void free_adv_accounts(nl_instance *inst) {
  for (size_t i = 0; i < inst->n_adv_accounts; i++) {
    free(inst->adv_accounts[i].account);
    free(inst->adv_accounts[i].credentials);
    free(inst->adv_accounts[i].user);
    free(inst->adv_accounts[i].password);
    nl_transport_free(inst->adv_accounts[i].transport);
  }
  free(inst->adv_accounts);
}

/* Frees the queue of created consumers waiting to be read. */
static void free_created(nl_instance *inst) {
  for (size_t i = 0; i < inst->n_created; i++) {
    free(inst->created[i].stream);
    free(inst->created[i].consumer);
  }
  free(inst->created);
}

/* Frees the options of inst that no thread uses: its name, servers,
 * stream selection (unless borrowed from its parent), credentials, TLS
 * files and stream declarations. */
static void free_options(nl_instance *inst) {
  free(inst->name);
  strarray_free(inst->urls, inst->n_urls);
  if (inst->parent == NULL) { /* An account instance borrows them. */
    strarray_free(inst->select.include, inst->select.n_include);
    strarray_free(inst->select.exclude, inst->select.n_exclude);
  }
  free(inst->user);
  free(inst->password);
  free(inst->token);
  free(inst->credentials);
  free(inst->nkey_seed);
  free(inst->tls_ca);
  free(inst->tls_cert);
  free(inst->tls_key);
  free(inst->inbox_prefix);
  for (size_t i = 0; i < inst->n_stream_decls; i++)
    nl_expect_spec_free(&inst->stream_decls[i]);
  free(inst->stream_decls);
}

void nl_instance_free(void *arg) {
  nl_instance *inst = arg;
  if (inst == NULL)
    return;
  /* Closing the connection first makes a request the advisory thread is
   * waiting on (a server that does not answer) fail at once, so stopping
   * the thread takes no Timeout; the same holds for a poll in progress.
   * The poller, the listener and the advisory thread use the engine: stop
   * them before it goes. */
  bool owns = inst->parent == NULL || inst->owns_transport;
  if (owns)
    nl_transport_close(inst->transport);
  nl_poller_stop(inst->poller);
  nl_advisory_thread_stop(inst->adv);
  /* The account instances after the poll thread (which makes them) and
   * before the listener (their advisory threads take its lock). */
  for (size_t i = 0; i < inst->n_accounts; i++)
    nl_instance_free(inst->accounts[i]);
  free(inst->accounts);
  free_adv_accounts(inst);
  nl_http_stop(inst->http);
  strarray_free(inst->account_select.include, inst->account_select.n_include);
  strarray_free(inst->account_select.exclude, inst->account_select.n_exclude);
  free(inst->account);
  free(inst->account_id);
  free(inst->listen_host);
  free(inst->listen_port);
  free(inst->listen_tls_cert);
  free(inst->listen_tls_key);
  free(inst->listen_client_ca);
  nl_auth_free(inst->listen_users);
  nl_engine_free(inst->engine);
  if (owns)
    nl_transport_free(inst->transport);
  nl_poll_log_close(inst->poll_log);
  free(inst->poll_log_path);
  /* After the transport: its callbacks queue. */
  nl_advisory_thread_free(inst->adv);
  pthread_mutex_destroy(&inst->engine_lock);
  free_created(inst);
  pthread_mutex_destroy(&inst->created_lock);
  pthread_mutex_destroy(&inst->send_lock);
  free_options(inst);
  free(inst);
}
