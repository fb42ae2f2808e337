long senders=1,2 receiver=3 bytes=1M start=1ms
staged step=10ms senders=4-7 receiver=0
incast bytes=64K every=2ms rounds=3 senders=1-3
