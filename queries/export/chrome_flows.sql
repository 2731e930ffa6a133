-- chrome_flows: the messages of run $run (message_round_trips) that the
-- Chrome export draws as flows: those whose client and server are known,
-- sent and received in [$from, $to) (a reply in it too, for the reply's
-- arrow), in the order they were sent.
SELECT client_id, server_id, msg_id, one_way, send_ts, receive_ts,
       CASE WHEN reply_ts < $to THEN reply_ts END AS reply_ts,
       wait_ns, service_ns, total_ns
FROM message_round_trips
WHERE run_id = $run AND client_id IS NOT NULL AND server_id IS NOT NULL
  AND send_ts >= $from AND receive_ts < $to
ORDER BY send_ts, send_seq
