poisson cdf=websearch load=0.3 duration=1ms
incast bytes=500K senders=1-6 receiver=0 rounds=3 gap=10us
