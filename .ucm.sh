#!/bin/sh
env | grep RDMASTACK | head -20
rdma link show
ip -4 -o addr | head
