/* main.c: runs every unit test of the pure core.
 * Usage: unit_tests FIXTURE_DIR */
#include "nl_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nl_test_failures;
const char *nl_test_fixture_dir = "tests/fixtures";

char *nl_test_read_fixture(const char *name, size_t *len) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", nl_test_fixture_dir, name);
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "  missing fixture %s\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf != NULL) {
    buf[n] = '\0';
    *len = (size_t)n;
  }
  return buf;
}

const nl_stream_snap *nl_test_stream(const nl_snapshot_set *set,
                                     const char *name) {
  for (size_t i = 0; i < set->n_streams; i++)
    if (strcmp(set->streams[i].name, name) == 0)
      return &set->streams[i];
  return NULL;
}

const nl_consumer_snap *nl_test_consumer(const nl_snapshot_set *set,
                                         const char *name) {
  for (size_t i = 0; i < set->n_consumers; i++)
    if (strcmp(set->consumers[i].name, name) == 0)
      return &set->consumers[i];
  return NULL;
}

#define TESTS(X)                                                               \
  X(test_advisory_parse_fixtures)                                              \
  X(test_advisory_parse_hostile)                                               \
  X(test_advisory_queue_bounded)                                               \
  X(test_max_deliver_exhausted_from_advisory)                                  \
  X(test_max_deliveries_claims_are_checked)                                    \
  X(test_max_deliver_exhausted_polled_lower_bound)                             \
  X(test_nak_storm_from_advisories)                                            \
  X(test_forged_nak_burst_is_not_a_storm)                                      \
  X(test_bounded_nak_loop_is_not_a_storm)                                      \
  X(test_retry_wave_is_not_a_storm)                                            \
  X(test_deleted_advisory_is_a_claim)                                          \
  X(test_config_classes_follow_audit)                                          \
  X(test_interest_no_consumers)                                                \
  X(test_interest_stream_before_its_consumers_is_silent)                       \
  X(test_interest_consumer_reset_is_not_a_drop)                                \
  X(test_single_replica_and_unobservable)                                      \
  X(test_publish_rejected_limits)                                              \
  X(test_consumer_single_replica)                                              \
  X(test_publish_rejected_taking_is_not_refusing)                              \
  X(test_publish_rejected_hold_and_clear)                                      \
  X(test_expiry_warning_and_fix)                                               \
  X(test_expiry_regular_gaps_are_silent)                                       \
  X(test_expiry_expired_and_recreated)                                         \
  X(test_expiry_deletes_are_not_expiry)                                        \
  X(test_expiry_look_alikes_are_silent)                                        \
  X(test_expiry_outlived_threshold_is_unseen_activity)                         \
  X(test_expiry_push_unbound)                                                  \
  X(test_expiry_expired_clears_after_hold)                                     \
  X(test_expiry_held_message_counts_its_ack_wait)                              \
  X(test_expiry_quiet_then_gone)                                               \
  X(test_expiry_api_audit_parse)                                               \
  X(test_push_unbound)                                                         \
  X(test_retention_risk_forecast)                                              \
  X(test_retention_risk_max_age)                                               \
  X(test_retention_risk_healthy_are_silent)                                    \
  X(test_retention_risk_does_not_flap)                                         \
  X(test_nak_with_delay_is_not_ack_wait)                                       \
  X(test_nak_advisories_explain_redeliveries)                                  \
  X(test_nak_retries_with_late_advisories_are_not_ack_wait)                    \
  X(test_parse_stream_list_inline)                                             \
  X(test_parse_api_error)                                                      \
  X(test_parse_malformed_replies)                                              \
  X(test_parse_hostile_items_are_skipped)                                      \
  X(test_parse_consumer_list_inline)                                           \
  X(test_parse_rfc3339)                                                        \
  X(test_parse_recorded_fixtures)                                              \
  X(test_name_fit)                                                             \
  X(test_audit_good_configs_are_silent)                                        \
  X(test_audit_ack_none)                                                       \
  X(test_audit_ack_all_parallel)                                               \
  X(test_audit_max_deliver)                                                    \
  X(test_audit_max_ack_pending_tiny)                                           \
  X(test_audit_ack_wait_below_processing)                                      \
  X(test_audit_interest_no_consumers)                                          \
  X(test_audit_retention_below_backlog)                                        \
  X(test_audit_r1_on_cluster)                                                  \
  X(test_audit_push_no_heartbeat)                                              \
  X(test_audit_invalid_expectation)                                            \
  X(test_audit_unobservable_and_selection)                                     \
  X(test_audit_subject_capture)                                                \
  X(test_audit_class_names)                                                    \
  X(test_audit_severity_matches_plugin_class)                                  \
  X(test_stream_churn_is_forgotten)                                            \
  X(test_series_merges_polls_into_steps)                                       \
  X(test_series_keeps_the_latest_hour)                                         \
  X(test_evidence_text_keeps_whole_items)                                      \
  X(test_missing_stream_is_unobservable)                                       \
  X(test_one_unobservable_poll_is_not_a_finding)                               \
  X(test_short_stream_list_keeps_unlisted)                                     \
  X(test_parse_stream_list_missing)                                            \
  X(test_ack_samples_p99)                                                      \
  X(test_created_consumer_refresh)                                             \
  X(test_declared_processing_raises_ack_wait)                                  \
  X(test_declared_processing_with_redeliveries)                                \
  X(test_bad_declaration_told_once)                                            \
  X(test_expect_durations)                                                     \
  X(test_expect_specs)                                                         \
  X(test_expect_apply_and_read)                                                \
  X(test_snapshot_meta_limits)                                                 \
  X(test_parse_audit_fields)                                                   \
  X(test_poll_pages_through_consumers)                                         \
  X(test_poll_drops_repeated_consumers)                                        \
  X(test_poll_pages_past_a_lying_total)                                        \
  X(test_poll_failed_consumer_list_marks_stream_incomplete)                    \
  X(test_poll_pages_count_missing_streams)                                     \
  X(test_poll_short_stream_list)                                               \
  X(test_poll_never_requests_hostile_subjects)                                 \
  X(test_poll_stream_globs)                                                    \
  X(test_healthy_no_findings)                                                  \
  X(test_busy_long_ack_wait_not_missing_progress)                              \
  X(test_ack_wait_violation_fires_and_clears)                                  \
  X(test_ack_wait_counts_redeliveries_acked_between_polls)                     \
  X(test_ack_wait_with_polls_much_shorter_than_ack_wait)                       \
  X(test_ack_wait_seen_when_redelivery_lifts_consumer_floor)                   \
  X(test_single_redelivery_is_not_a_finding)                                   \
  X(test_crash_redelivery_burst_is_not_a_finding)                              \
  X(test_crash_redeliveries_spread_over_polls)                                 \
  X(test_bounded_nak_loop_polled_is_not_a_storm)                               \
  X(test_restored_creation_time_is_the_same_consumer)                          \
  X(test_fix_command_names)                                                    \
  X(test_nak_storm_needs_two_intervals)                                        \
  X(test_transient_nak_is_not_a_storm)                                         \
  X(test_missing_progress_long_task)                                           \
  X(test_gap_starts_a_new_regime)                                              \
  X(test_restored_floor_after_gap_is_not_stuck)                                \
  X(test_restored_floor_moving_back_is_not_stuck)                              \
  X(test_restored_floor_nak_retries_are_no_storm)                              \
  X(test_restart_then_crash_is_no_repeat)                                      \
  X(test_overlapping_long_tasks_are_missing_progress)                          \
  X(test_slow_processing_with_standing_floor_is_ack_wait)                      \
  X(test_max_pending_throttle)                                                 \
  X(test_max_pending_condition_since)                                          \
  X(test_threshold_hover_gives_one_onset)                                      \
  X(test_onset_rate_last_hour)                                                 \
  X(test_max_pending_boundaries)                                               \
  X(test_sequence_gap_never_acked)                                             \
  X(test_sequence_gap_skipped_within_interval)                                 \
  X(test_sequence_gap_not_for_idle_filtered_consumer)                          \
  X(test_sequence_gap_not_for_floor_behind_first_seq)                          \
  X(test_sequence_gap_filtered_by_num_pending)                                 \
  X(test_sequence_gap_not_for_unstored)                                        \
  X(test_recreated_stream_forgets_unstored)                                    \
  X(test_sequence_gap_behind_empty_stream_stays)                               \
  X(test_sequence_gap_not_for_start_after_empty)                               \
  X(test_sequence_gap_stream_recreated)                                        \
  X(test_sequence_gap_unacked_evicted)                                         \
  X(test_sequence_gap_unacked_claims_checked)                                  \
  X(test_sequence_gap_not_for_msg_ttl)                                         \
  X(test_sequence_gap_purge_has_no_limit_fix)                                  \
  X(test_sequence_gap_not_for_schedule)                                        \
  X(test_sequence_gap_schedule_fired_between_replies)                          \
  X(test_removal_cause)                                                        \
  X(test_retention_age_after_ttl_expiry)                                       \
  X(test_recreated_consumer_resets_history)                                    \
  X(test_deleted_consumer_clears_findings)                                     \
  X(test_event_firing_json_fields)                                             \
  X(test_event_resolved_json)                                                  \
  X(test_event_names_not_utf8_stay_valid_json)                                 \
  X(test_event_subjects)                                                       \
  X(test_event_prefix_valid)                                                   \
  X(test_event_summary_json)                                                   \
  X(test_health_transition_policy)                                             \
  X(test_health_summary_schedule)                                              \
  X(test_view_violations)                                                      \
  X(test_view_violations_stream_level)                                         \
  X(test_view_streams)                                                         \
  X(test_view_accounts_merged)                                                 \
  X(test_view_history)                                                         \
  X(test_view_health_words)                                                    \
  X(test_route_decode)                                                         \
  X(test_route_parse)                                                          \
  X(test_unlisted_consumer_of_incomplete_stream_is_kept)                       \
  X(test_hostile_truncated_replies)                                            \
  X(test_hostile_wrong_types)                                                  \
  X(test_hostile_numbers)                                                      \
  X(test_hostile_extreme_durations)                                            \
  X(test_hostile_names)                                                        \
  X(test_hostile_stream_names)                                                 \
  X(test_hostile_deep_and_odd_json)                                            \
  X(test_nkey_public_from_seed)                                                \
  X(test_nkey_bad_seeds)                                                       \
  X(test_history_past_samples_exact)                                           \
  X(test_history_restarts_on_huge_step)                                        \
  X(test_history_times_to_the_millisecond)                                     \
  X(test_jsz_single_server_accounts)                                           \
  X(test_jsz_cluster_leaders)                                                  \
  X(test_jsz_cluster_leader_down)                                              \
  X(test_jsz_select_and_hostile)                                               \
  X(test_scope_server_leaders)                                                 \
  X(test_scope_engine_led_elsewhere)                                           \
  X(test_coverage_agent_down)                                                  \
  X(test_coverage_move_r1_deleted)                                             \
  X(test_coverage_moved_to_silent_agent)                                       \
  X(test_event_agent_fields)                                                   \
  X(test_paused_consumer)                                                      \
  X(test_fixture_versions)                                                     \
  X(test_source_parse_versions)                                                \
  X(test_source_recreated_origin)                                              \
  X(test_source_recreated_copy_clears)                                         \
  X(test_source_idle_and_silent)                                               \
  X(test_source_stall_rule)                                                    \
  X(test_source_recreated_empty_is_silent)                                     \
  X(test_source_old_heartbeat_is_not_live)                                     \
  X(test_source_waiting)                                                       \
  X(test_source_first_seen_after_recreation)                                   \
  X(test_source_flowing_count)                                                 \
  X(test_source_parse_odd)                                                     \
  X(test_jsz_copies)                                                           \
  X(test_source_count_capped_at_position)                                      \
  X(test_source_restored_origin_is_not_counted)                                \
  X(test_rate_limited_raised_and_fixed)                                        \
  X(test_rate_limited_filtered)                                                \
  X(test_rate_limited_healthy_are_silent)                                      \
  X(test_rate_limited_holds_and_clears)                                        \
  X(test_rate_limited_window_in_polls)                                         \
  X(test_rate_limited_behind_margin)                                           \
  X(test_rate_bytes_per_delivery)

#define DECLARE(name) void name(void);
TESTS(DECLARE)

typedef struct {
  const char *name;
  void (*fn)(void);
} test_case;

#define ENTRY(name) {#name, name},
static const test_case tests[] = {TESTS(ENTRY)};

int main(int argc, char **argv) {
  if (argc > 1)
    nl_test_fixture_dir = argv[1];
  const char *only = argc > 2 ? argv[2] : NULL;
  int passed = 0, failed = 0;
  for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (only != NULL && strstr(tests[i].name, only) == NULL)
      continue;
    int before = nl_test_failures;
    tests[i].fn();
    if (nl_test_failures == before) {
      printf("PASS unit/%s\n", tests[i].name);
      passed++;
    } else {
      printf("FAIL unit/%s\n", tests[i].name);
      failed++;
    }
  }
  printf("unit: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
