intersite cdf=x load=0.5 duration=100us cross=0.25 hosts=0-7
