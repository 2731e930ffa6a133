-- message_round_trips: every message sent between tasks or threads, in
-- every format that traces them (docs/semantics.md, "Messages: round
-- trips"), as the message model writes it (the table messages): a round
-- trip is sent by a client, received by a server and replied to; a
-- one-way message (QNX: a pulse) is sent and received, and has no reply.
-- wait_ns = receive_ts - send_ts (in the server's queue, or until the
-- server asked for it), service_ns = reply_ts - receive_ts (the server's
-- work), total_ns = reply_ts - send_ts (what the client waited for, until
-- the reply was delivered to it); NULL when an end is not in the trace.
-- truncated: one of its events (send, receive, reply; one-way: send,
-- receive) is not in the trace (cut by the start or the end of the
-- trace, or the client sent again before the reply: diagnostics say
-- which); statistics should leave those out.
-- Columns: run_id, client_id, client (the sender's name; NULL when the
-- trace does not tell), server_id, server (the thread that received it,
-- else the receiver the send names), channel (the channel or connection,
-- NULL when none), msg_id (the trace's id: QNX rcvid, or a pulse's
-- scoid), send_ts, receive_ts, reply_ts, wait_ns, service_ns, total_ns,
-- truncated, one_way, channel_id, send_seq, receive_seq, reply_seq (the
-- events).
-- Example: SELECT client, server, count(*), quantile_disc(total_ns, 0.99) FROM message_round_trips WHERE NOT truncated AND NOT one_way GROUP BY ALL
CREATE OR REPLACE VIEW message_round_trips AS
SELECT m.run_id, m.client_id, c.name AS client, m.server_id, s.name AS server, ch.name AS channel,
       m.msg_id, m.send_ts, m.receive_ts, m.reply_ts,
       m.receive_ts - m.send_ts AS wait_ns,
       m.reply_ts - m.receive_ts AS service_ns,
       m.reply_ts - m.send_ts AS total_ns,
       m.truncated, m.one_way, m.channel_id, m.send_seq, m.receive_seq, m.reply_seq
FROM messages m
LEFT JOIN objects c ON c.run_id = m.run_id AND c.object_id = m.client_id
LEFT JOIN objects s ON s.run_id = m.run_id AND s.object_id = m.server_id
LEFT JOIN objects ch ON ch.run_id = m.run_id AND ch.object_id = m.channel_id;
